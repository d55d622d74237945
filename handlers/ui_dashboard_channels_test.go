package handlers_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/leadgate/leadgate/models"
)

func TestUIDashboardChartsEventsByChannel(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)
	c := e.signedIn(models.RoleViewer)
	empty := c.get("/w/default/")
	expectBody(t, "empty dashboard", empty, `data-testid="channel-chart"`, "Events per minute by channel", "No events in the last 24 hours")

	// Two web-form sources and one voice source: the channel chart sums the web forms.
	web1, web2 := e.seedSource("Landing page"), e.seedSource("Pricing page")
	voice := models.Source{WorkspaceID: e.ws.ID, Name: "Voice agent", Kind: "standard-webhooks", Channel: "voice",
		SecretEnc: uiSeal(t, e, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")}
	if err := e.store.SourceCreate(context.Background(), &voice); err != nil {
		t.Fatal(err)
	}
	for _, src := range []models.Source{web1, web1, web2, voice} {
		e.event(src, "form_submitted", models.EventApplied, `{}`)
	}
	dash := c.get("/w/default/")
	expectStatus(t, "dashboard", dash, http.StatusOK)
	_, channel, ok := strings.Cut(dash.body, `data-testid="channel-chart"`)
	if !ok {
		t.Fatal("no channel chart")
	}
	channel, _, _ = strings.Cut(channel, "</figure>")
	expectBody(t, "channel chart", uiResponse{body: channel}, `aria-label="Events per minute by channel over the last 24 hours, `,
		"web_form <span class=\"muted\">3 events", "voice <span class=\"muted\">1 events")
	if n := strings.Count(channel, "<polyline"); n != 2 {
		t.Fatalf("channel chart draws %d lines, want 2 (web_form, voice)", n)
	}
	if strings.Contains(channel, "Landing page") {
		t.Fatal("the channel chart lists sources")
	}
	expectBody(t, "source chart stays", dash, `data-testid="rate-chart"`, "Landing page", "Pricing page")
}

var appScript = regexp.MustCompile(`<script src="(/static/js/app\.[0-9a-f]+\.js)" defer></script>`)

func TestUIDeadLetterSelectAll(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)
	ctx := context.Background()
	src := e.seedSource("Web form")
	a, b := e.conflict(src, "ann@example.com"), e.conflict(src, "bo@example.com")
	c := e.signedIn(models.RoleEditor)

	page := c.get("/w/default/dead-letters")
	expectBody(t, "list", page, `<form id="dead-letter-bulk"`,
		`<input type="checkbox" data-select-all="dead-letter-bulk" hidden aria-label="Select every dead letter on this page">`,
		`data-selected-count aria-live="polite"`)
	// The behaviour lives in a static file; the CSP still forbids inline script.
	if csp := page.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self';") || strings.Contains(csp, "unsafe-inline") {
		t.Fatalf("CSP loosened: %s", csp)
	}
	m := appScript.FindStringSubmatch(page.body)
	if m == nil {
		t.Fatal("the page does not load app.js")
	}
	res, err := http.Get(e.srv.URL + m[1])
	if err != nil {
		t.Fatal(err)
	}
	js, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(res.Header.Get("Content-Type"), "javascript") || !strings.Contains(string(js), "data-select-all") {
		t.Fatalf("app.js: %d %s %.100s", res.StatusCode, res.Header.Get("Content-Type"), js)
	}

	// What select-all submits (every id of the page) discards both.
	ids := url.Values{"action": {"discard"}, "id": {strconv.FormatInt(a.ID, 10), strconv.FormatInt(b.ID, 10)}}
	expectStatus(t, "bulk discard", c.post("/w/default/dead-letters/bulk", ids), http.StatusSeeOther)
	for _, d := range []models.DeadLetter{a, b} {
		if got, _ := e.store.DeadLetterGet(ctx, e.ws.ID, d.ID); got.Status != models.DeadLetterDiscarded {
			t.Fatalf("dead letter %d is %s after a bulk discard", d.ID, got.Status)
		}
	}

	// A viewer gets no selection controls at all.
	e.conflict(src, "cy@example.com")
	viewer := e.signedIn(models.RoleViewer)
	if body := viewer.get("/w/default/dead-letters").body; strings.Contains(body, "data-select-all") {
		t.Fatal("viewer sees the select-all box")
	}
}
