package ui_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/handlers/handlerstest"
	"github.com/leadgate/leadgate/models"
)

// The sales page's trends: new leads per week by first-touch source and
// channel, how far each source's leads got, and the median time from first
// seen to each stage by the week the leads were first seen.
func TestUISalesTrendsWeeklyLeadsConversionPerSourceAndTimeToStage(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	ctx := context.Background()
	web, voice := e.SeedSource("Web form"), e.SeedSource("Voice agent")
	now := time.Now().UTC()
	e.Apply(web, handlerstest.Lead{Email: "a@example.com", Stage: "Discovered", At: now.Add(-72 * time.Hour)})
	e.Apply(web, handlerstest.Lead{Email: "a@example.com", Stage: "Engaged", At: now.Add(-24 * time.Hour)})
	e.Apply(web, handlerstest.Lead{Email: "b@example.com", Stage: "Discovered", At: now.Add(-48 * time.Hour)})
	e.Apply(voice, handlerstest.Lead{Email: "c@example.com", Stage: "SQL", At: now.Add(-2 * time.Hour)})
	for email, ago := range map[string]time.Duration{"a@example.com": 72 * time.Hour, "b@example.com": 48 * time.Hour, "c@example.com": 2 * time.Hour} {
		if err := e.Store.DB().WithContext(ctx).Exec(`UPDATE contacts SET first_seen_at = ? WHERE email = ?`, now.Add(-ago), email).Error; err != nil {
			t.Fatal(err)
		}
	}
	viewer := e.SignedIn(models.RoleViewer)
	res := viewer.Get("/w/default/sales")
	handlerstest.ExpectStatus(t, "sales", res, http.StatusOK)
	card := func(id string) handlerstest.Response {
		_, rest, ok := strings.Cut(res.Body, `data-testid="`+id+`"`)
		if !ok {
			t.Fatalf("no %s card", id)
		}
		rest, _, _ = strings.Cut(rest, `<div class="card`)
		return handlerstest.Response{Body: rest}
	}
	weekly := card("sales-weekly")
	handlerstest.ExpectBody(t, "weekly chart", weekly, `role="img"`, "Web form · web_form <span class=\"muted\">2 new leads", "Voice agent · web_form <span class=\"muted\">1 new leads")
	if n := strings.Count(weekly.Body, "<rect class=\"series-"); n < 2 {
		t.Fatalf("weekly chart draws %d bar segments", n)
	}
	// Web form: 2 leads, both Discovered, one Engaged, none SQL. Voice: 1 lead straight to SQL.
	conv := card("sales-source-conversion")
	webRow, _, _ := strings.Cut(conv.Body[strings.Index(conv.Body, ">Web form<"):], "</tr>")
	voiceRow, _, _ := strings.Cut(conv.Body[strings.Index(conv.Body, ">Voice agent<"):], "</tr>")
	handlerstest.ExpectBody(t, "web form conversion", handlerstest.Response{Body: webRow}, `>2</td>`, `title="2 leads">100%<`, `title="1 leads">50%<`, `title="0 leads">0%<`)
	// Its jump counts it as past Discovered and Engaged too.
	if n := strings.Count(voiceRow, `title="1 leads">100%<`); n != 3 {
		t.Fatalf("the voice lead reached %d of Discovered, Engaged, SQL: %s", n, voiceRow)
	}
	// a entered Engaged 48 h after it was first seen.
	handlerstest.ExpectBody(t, "time to stage", card("sales-time-to-stage"), "2.0 days (1)")

	empty := viewer.Get("/w/default/sales?from=2020-01-01&to=2020-01-31")
	handlerstest.ExpectBody(t, "a range without leads", empty, "No new leads between 2020-01-01 and 2020-01-31")
}
