package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/models"
)

// The sales page's trends: new leads per week by first-touch source and
// channel, how far each source's leads got, and the median time from first
// seen to each stage by the week the leads were first seen.
func TestUISalesTrendsWeeklyLeadsConversionPerSourceAndTimeToStage(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)
	ctx := context.Background()
	web, voice := e.seedSource("Web form"), e.seedSource("Voice agent")
	now := time.Now().UTC()
	e.apply(web, lead{email: "a@example.com", stage: "Discovered", at: now.Add(-72 * time.Hour)})
	e.apply(web, lead{email: "a@example.com", stage: "Engaged", at: now.Add(-24 * time.Hour)})
	e.apply(web, lead{email: "b@example.com", stage: "Discovered", at: now.Add(-48 * time.Hour)})
	e.apply(voice, lead{email: "c@example.com", stage: "SQL", at: now.Add(-2 * time.Hour)})
	for email, ago := range map[string]time.Duration{"a@example.com": 72 * time.Hour, "b@example.com": 48 * time.Hour, "c@example.com": 2 * time.Hour} {
		if err := e.store.DB().WithContext(ctx).Exec(`UPDATE contacts SET first_seen_at = ? WHERE email = ?`, now.Add(-ago), email).Error; err != nil {
			t.Fatal(err)
		}
	}
	viewer := e.signedIn(models.RoleViewer)
	res := viewer.get("/w/default/sales")
	expectStatus(t, "sales", res, http.StatusOK)
	card := func(id string) uiResponse {
		_, rest, ok := strings.Cut(res.body, `data-testid="`+id+`"`)
		if !ok {
			t.Fatalf("no %s card", id)
		}
		rest, _, _ = strings.Cut(rest, `<div class="card`)
		return uiResponse{body: rest}
	}
	weekly := card("sales-weekly")
	expectBody(t, "weekly chart", weekly, `role="img"`, "Web form · web_form <span class=\"muted\">2 new leads", "Voice agent · web_form <span class=\"muted\">1 new leads")
	if n := strings.Count(weekly.body, "<rect class=\"series-"); n < 2 {
		t.Fatalf("weekly chart draws %d bar segments", n)
	}
	// Web form: 2 leads, both Discovered, one Engaged, none SQL. Voice: 1 lead straight to SQL.
	conv := card("sales-source-conversion")
	webRow, _, _ := strings.Cut(conv.body[strings.Index(conv.body, ">Web form<"):], "</tr>")
	voiceRow, _, _ := strings.Cut(conv.body[strings.Index(conv.body, ">Voice agent<"):], "</tr>")
	expectBody(t, "web form conversion", uiResponse{body: webRow}, `>2</td>`, `title="2 leads">100%<`, `title="1 leads">50%<`, `title="0 leads">0%<`)
	// Its jump counts it as past Discovered and Engaged too.
	if n := strings.Count(voiceRow, `title="1 leads">100%<`); n != 3 {
		t.Fatalf("the voice lead reached %d of Discovered, Engaged, SQL: %s", n, voiceRow)
	}
	// a entered Engaged 48 h after it was first seen.
	expectBody(t, "time to stage", card("sales-time-to-stage"), "2.0 days (1)")

	empty := viewer.get("/w/default/sales?from=2020-01-01&to=2020-01-31")
	expectBody(t, "a range without leads", empty, "No new leads between 2020-01-01 and 2020-01-31")
}
