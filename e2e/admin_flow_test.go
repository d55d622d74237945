//go:build proof

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/leadgate/leadgate/ingest/signature"
	"github.com/leadgate/leadgate/models"
)

const (
	adminEmail    = "ops@example.com"
	adminPassword = "correct horse battery staple"
)

// sender posts signed Standard Webhooks deliveries to one ingest URL.
type sender struct {
	t       *testing.T
	url     string
	secret  string
	counter int
}

func (s *sender) send(payload map[string]any) string {
	s.t.Helper()
	body, _ := json.Marshal(payload)
	s.counter++
	req := signature.Request{Method: http.MethodPost, URL: s.url, Header: http.Header{}, Body: body}
	id := "msg_e2e_" + strconv.Itoa(s.counter)
	if err := signature.Sign(signature.KindStandardWebhooks, signature.SignConfig{Secret: s.secret, DeliveryID: id}, &req, time.Now()); err != nil {
		s.t.Fatalf("sign: %v", err)
	}
	hreq, _ := http.NewRequest(http.MethodPost, s.url, bytes.NewReader(body))
	hreq.Header = req.Header
	hreq.Header.Set("Content-Type", "application/json")
	res := post(s.t, hreq)
	defer res.Body.Close()
	answer, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || !strings.Contains(string(answer), `"queued"`) {
		s.t.Fatalf("webhook answered %d %s", res.StatusCode, answer)
	}
	var out struct {
		EventID string `json:"event_id"`
	}
	_ = json.Unmarshal(answer, &out)
	return out.EventID
}

// TestAdminFlow is an operator's first session: sign in, create a source,
// watch signed deliveries arrive, edit the stage rules with a preview, and
// replay the dead letter a regression produced.
func TestAdminFlow(t *testing.T) {
	st := newStack(t)
	ctx := context.Background()
	if _, err := st.store.UserCreate(ctx, adminEmail, adminPassword, models.RoleAdmin, false); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, st.url)

	// Sign in.
	b.open("/login", `input[name=email]`)
	b.page("login")
	b.do("sign in",
		chromedp.SetValue(chromedp.CSS(`input[name=email]`), adminEmail),
		chromedp.SetValue(chromedp.CSS(`input[name=password]`), adminPassword),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=health-panel]`)),
	)
	if got := b.text(`[data-testid=kpi-received]`); got != "0" {
		t.Fatalf("a fresh workspace received %q deliveries", got)
	}

	// Create a source in the form and read its one-time secret.
	b.open("/w/default/sources/new", `[data-testid=source-form]`)
	b.do("create source",
		chromedp.SetValue(chromedp.CSS(`input[name=name]`), "Website form"),
		chromedp.SetValue(chromedp.CSS(`input[name=channel]`), "web_form"),
		chromedp.SetValue(chromedp.CSS(`input[name=default_region]`), "US"),
		chromedp.Click(chromedp.CSS(`[data-testid=source-form] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=secret]`)),
	)
	s := &sender{t: t, url: b.text(`[data-testid=ingest-url]`), secret: b.text(`[data-testid=secret]`)}
	if !strings.HasPrefix(s.url, st.url+"/hooks/") || !strings.HasPrefix(s.secret, "whsec_") {
		t.Fatalf("source reveal shows %q and %q", s.url, s.secret)
	}

	// Deliveries: Jane reaches SQL; three more leads fill the funnel.
	now := time.Now().UTC()
	jane := s.send(map[string]any{"event_type": "form_submitted", "email": "Jane.Doe@Example.com", "first_name": "jane", "last_name": "doe",
		"company": "Acme", "target_stage": "SQL", "occurred_at": now.Add(-time.Hour).Format(time.RFC3339)})
	for i, who := range []string{"bob", "carol", "dave"} {
		s.send(map[string]any{"event_type": "form_submitted", "email": who + "@example.com", "first_name": who,
			"target_stage": []string{"Engaged", "Discovered", "Discovered"}[i], "attribution": map[string]string{"utm_source": "ads"}})
	}
	b.eventually("/w/default/", `[data-testid=counter-applied] dd`, "applied counter", func(s string) bool { return s == "4" })
	if got := b.text(`[data-testid=kpi-received]`); got != "4" {
		t.Fatalf("dashboard shows %s deliveries, want 4", got)
	}
	b.open("/w/default/events", `[data-testid=events-table]`)
	if got := b.text(`[data-testid=events-table] tbody`); !strings.Contains(got, "jane.doe@example.com") || strings.Count(got, "form_submitted") != 4 {
		t.Fatalf("events table: %q", got)
	}
	b.do("open an event in the side panel", chromedp.Click(chromedp.CSS(`[data-testid=events-table] tbody tr a`)),
		chromedp.WaitVisible(chromedp.CSS(`#event-panel [data-testid=payload]`)))
	// With the side panel open at 1440 px the Status column is whole, not clipped by the card.
	clipped := `(() => { const card = document.querySelector('[data-testid=events-table]').closest('.card');
		const edge = card.getBoundingClientRect().right;
		return card.scrollWidth > card.clientWidth || [...card.querySelectorAll('tbody td:last-child .badge')].some(b => b.getBoundingClientRect().right > edge); })()`
	if bad, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](clipped)); err != nil || bad {
		t.Fatalf("the events table's Status column is clipped at %d px (%v)", viewportWidth, err)
	}
	b.page("events")

	// A newer event proposing a lower stage is quarantined.
	s.send(map[string]any{"event_type": "newsletter_signup", "email": "jane.doe@example.com", "target_stage": "Discovered",
		"occurred_at": now.Format(time.RFC3339)})
	b.eventually("/w/default/", `[data-testid=counter-quarantined] dd`, "quarantined counter", func(s string) bool { return s == "1" })
	if got := b.text(`[data-testid=kpi-received]`); got != "5" {
		t.Fatalf("dashboard shows %s deliveries, want 5", got)
	}
	b.page("dashboard")

	// The time-range picker swaps the charts in place, keeps the range in the
	// URL, and zooms each range to its data: a week's chart of this morning's
	// events starts twelve hours back, not seven days.
	domain := func() time.Time {
		raw, err := chromedp.Run(b.ctx, chromedp.AttributeValue(chromedp.CSS(`[data-testid=rate-chart]`), "data-domain-start"))
		if err != nil {
			t.Fatalf("chart domain: %v", err)
		}
		v, err := time.Parse(time.RFC3339, raw.Value)
		if err != nil {
			t.Fatalf("chart domain %q: %v", raw.Value, err)
		}
		return v
	}
	day := domain()
	b.do("pick 7 days", chromedp.Click(chromedp.CSS(`[data-testid=range-7d]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=range-7d][aria-current]`)))
	week := domain()
	loc, _ := chromedp.Run(b.ctx, chromedp.Location())
	if !strings.HasSuffix(loc, "/w/default/?range=7d") || !week.Before(day) || time.Since(week) > 13*time.Hour {
		t.Fatalf("7-day pick: at %s the chart starts %v (24 h started %v)", loc, week, day)
	}
	b.do("pick 1 hour", chromedp.Click(chromedp.CSS(`[data-testid=range-1h]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=range-1h][aria-current]`)))
	if hour := domain(); !hour.After(day) {
		t.Fatalf("1-hour chart starts %v, not after the 24-hour one's %v", hour, day)
	}

	// Stage rules: add a stage, move it before Closed, preview allowing regression, save.
	b.open("/w/default/stages", `[data-testid=rules-editor]`)
	b.do("add a stage with htmx",
		chromedp.SetValue(chromedp.CSS(`#new-stage`), "Proposal"),
		chromedp.Click(chromedp.CSS(`#add-stage`)),
		chromedp.WaitVisible(chromedp.CSS(`#up-proposal`)),
		chromedp.Click(chromedp.CSS(`#up-proposal`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=stage-row-3] input[value=Proposal]`)),
	)
	b.do("preview allowing regression",
		chromedp.Click(chromedp.CSS(`input[name=allow_regression]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=dry-run-button]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=dry-run-changes]`)),
	)
	if got := b.text(`[data-testid=dry-run-changes]`); !strings.Contains(got, "jane.doe@example.com") || !strings.Contains(got, "Discovered") {
		t.Fatalf("preview: %q", got)
	}
	b.page("stage-rules")
	b.do("save without regression",
		chromedp.Click(chromedp.CSS(`input[name=allow_regression]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=save-rules]`)),
		chromedp.WaitVisible(chromedp.CSS(`.flash-ok`)),
	)
	if got := b.text(`.flash-ok`); !strings.Contains(got, "version 1") {
		t.Fatalf("save flash: %q", got)
	}
	if got := b.text(`[data-testid=rules-versions]`); !strings.Contains(got, "v1") {
		t.Fatalf("version history: %q", got)
	}

	// Replay the dead letter, forcing Jane to Proposal.
	b.open("/w/default/dead-letters", `[data-testid=dead-letters-table]`)
	if got := b.text(`[data-testid=dead-letters-table] tbody`); !strings.Contains(got, "state_conflict") {
		t.Fatalf("dead letters: %q", got)
	}
	b.page("dead-letters")
	// The select-all box works from the keyboard (static/js/app.js, within the CSP): Space picks every
	// row and says how many, Space again clears them.
	allPicked := `[...document.querySelectorAll('#dead-letter-bulk input[name=id]')].every(x => x.checked) &&
		document.querySelector('[data-selected-count]').textContent === '1 selected'`
	nonePicked := `[...document.querySelectorAll('#dead-letter-bulk input[name=id]')].every(x => !x.checked)`
	for _, want := range []string{allPicked, nonePicked} {
		b.do("toggle select-all by keyboard", chromedp.Focus(chromedp.CSS(`[data-select-all]`)), chromedp.KeyEvent(" "))
		if ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](want)); err != nil || !ok {
			t.Fatalf("select-all by keyboard: %s is %v (%v)", want, ok, err)
		}
	}
	b.do("open the dead letter", chromedp.Click(chromedp.CSS(`[data-testid=dead-letters-table] tbody a`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=replay-form]`)))
	b.page("dead-letter")
	b.do("replay forcing a stage",
		chromedp.Click(chromedp.CSS(`input[value=force_stage]`)),
		chromedp.SetValue(chromedp.CSS(`[data-testid=replay-form] select[name=stage]`), "Proposal"),
		chromedp.Click(chromedp.CSS(`[data-testid=replay-form] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`.flash-ok`)),
	)
	if got := b.text(`.flash-ok`); !strings.Contains(got, "now applied") {
		t.Fatalf("replay flash: %q", got)
	}
	janeContact, err := st.store.ContactFindByEmail(ctx, 1, "jane.doe@example.com")
	if err != nil || janeContact.Stage != "Proposal" {
		t.Fatalf("Jane after the replay: %+v %v", janeContact, err)
	}

	// The contact's timeline shows the whole story.
	b.open("/w/default/contacts/"+janeContact.ID, `[data-testid=timeline]`)
	if got := b.text(`[data-testid=timeline]`); !strings.Contains(got, "SQL → Proposal") || !strings.Contains(got, "state conflict") {
		t.Fatalf("timeline: %q", got)
	}
	b.page("contact")
	b.open("/w/default/contacts", `[data-testid=contacts-table]`)
	b.page("contacts")
	b.open("/w/default/sales", `[data-testid=sales-conversion]`)
	b.page("sales")
	b.open("/queues", `[data-testid=queues-table]`)
	b.page("queues")
	b.open("/w/default/sources", `[data-testid=sources-table]`)
	b.page("sources")
	b.open("/w/default/destinations", `[data-testid=destination-form]`)
	b.page("destinations")
	b.open("/w/default/guards", `[data-testid=loop-form]`)
	b.page("guards")
	b.open("/w/default/sources/new", `[data-testid=source-form]`)
	b.page("source-new")
	b.do("open a source", chromedp.Navigate(b.base+"/w/default/sources"), chromedp.Click(chromedp.CSS(`[data-testid=sources-table] tbody a`)),
		chromedp.WaitVisible(chromedp.CSS(`main h1`)))
	b.page("source")
	b.open("/w/default/events/"+jane, `main h1`)
	b.page("event")
	b.open("/w/default/stages/versions/1", `main h1`)
	b.page("stage-rules-version")
	b.open("/w/default/audit", `main h1`)
	b.page("audit")
	b.open("/account/password", `main h1`)
	b.page("password")
	b.open("/workspaces", `main h1`)
	b.page("workspaces")
	b.open("/tokens", `main h1`)
	b.page("tokens")
	b.open("/users", `main h1`)
	b.page("users")
	b.open("/w/default/", `[data-testid=funnel]`)
	if got := b.text(`[data-testid=funnel]`); !strings.Contains(got, "Proposal") {
		t.Fatalf("funnel: %q", got)
	}
	b.checkConsole()
	if ev, err := st.store.EventGet(ctx, 1, jane); err != nil || ev.Status != models.EventApplied {
		t.Fatalf("Jane's first event: %+v %v", ev, err)
	}
}
