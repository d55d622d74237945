package ui_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/leadgate/leadgate/handlers/handlerstest"
	"github.com/leadgate/leadgate/models"
)

func TestUIDashboardChartsEventsByChannel(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	c := e.SignedIn(models.RoleViewer)
	empty := c.Get("/w/default/")
	handlerstest.ExpectBody(t, "empty dashboard", empty, `data-testid="channel-chart"`, "Events per minute by channel", "No events in the last 24 hours")

	// Two web-form sources and one voice source: the channel chart sums the web forms.
	web1, web2 := e.SeedSource("Landing page"), e.SeedSource("Pricing page")
	voice := models.Source{WorkspaceID: e.WS.ID, Name: "Voice agent", Kind: "standard-webhooks", Channel: "voice",
		SecretEnc: handlerstest.Seal(t, e, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")}
	if err := e.Store.SourceCreate(context.Background(), &voice); err != nil {
		t.Fatal(err)
	}
	for _, src := range []models.Source{web1, web1, web2, voice} {
		e.Event(src, "form_submitted", models.EventApplied, `{}`)
	}
	dash := c.Get("/w/default/")
	handlerstest.ExpectStatus(t, "dashboard", dash, http.StatusOK)
	_, channel, ok := strings.Cut(dash.Body, `data-testid="channel-chart"`)
	if !ok {
		t.Fatal("no channel chart")
	}
	channel, _, _ = strings.Cut(channel, "</figure>")
	handlerstest.ExpectBody(t, "channel chart", handlerstest.Response{Body: channel}, `aria-label="Events per minute by channel over the last 24 hours, `,
		"web_form <span class=\"muted\">3 events", "voice <span class=\"muted\">1 events")
	if n := strings.Count(channel, "<polyline"); n != 2 {
		t.Fatalf("channel chart draws %d lines, want 2 (web_form, voice)", n)
	}
	if strings.Contains(channel, "Landing page") {
		t.Fatal("the channel chart lists sources")
	}
	handlerstest.ExpectBody(t, "source chart stays", dash, `data-testid="rate-chart"`, "Landing page", "Pricing page")
}

var appScript = regexp.MustCompile(`<script src="(/static/js/app\.[0-9a-f]+\.js)" defer></script>`)

func TestUIDeadLetterSelectAll(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	ctx := context.Background()
	src := e.SeedSource("Web form")
	a, b := e.Conflict(src, "ann@example.com"), e.Conflict(src, "bo@example.com")
	c := e.SignedIn(models.RoleEditor)

	page := c.Get("/w/default/dead-letters")
	handlerstest.ExpectBody(t, "list", page, `<form id="dead-letter-bulk"`,
		`<input type="checkbox" data-select-all="dead-letter-bulk" hidden aria-label="Select every dead letter on this page">`,
		`data-selected-count aria-live="polite"`)
	// The behaviour lives in a static file; the CSP still forbids inline script.
	if csp := page.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self';") || strings.Contains(csp, "unsafe-inline") {
		t.Fatalf("CSP loosened: %s", csp)
	}
	m := appScript.FindStringSubmatch(page.Body)
	if m == nil {
		t.Fatal("the page does not load app.js")
	}
	res, err := http.Get(e.Srv.URL + m[1])
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
	handlerstest.ExpectStatus(t, "bulk discard", c.Post("/w/default/dead-letters/bulk", ids), http.StatusSeeOther)
	for _, d := range []models.DeadLetter{a, b} {
		if got, _ := e.Store.DeadLetterGet(ctx, e.WS.ID, d.ID); got.Status != models.DeadLetterDiscarded {
			t.Fatalf("dead letter %d is %s after a bulk discard", d.ID, got.Status)
		}
	}

	// A viewer gets no selection controls at all.
	e.Conflict(src, "cy@example.com")
	viewer := e.SignedIn(models.RoleViewer)
	if body := viewer.Get("/w/default/dead-letters").Body; strings.Contains(body, "data-select-all") {
		t.Fatal("viewer sees the select-all box")
	}
}
