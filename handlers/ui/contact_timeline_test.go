package ui_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/handlers/handlerstest"
	"github.com/leadgate/leadgate/models"
)

func TestUIContactTimelinePagesOlderEntries(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	src := e.SeedSource("Web form")
	start := time.Now().UTC().Add(-48 * time.Hour)
	for i := range 40 {
		e.Apply(src, handlerstest.Lead{Email: "ann@example.com", First: fmt.Sprintf("Ann%02d", i), Stage: "Discovered", At: start.Add(time.Duration(i) * time.Minute)})
	}
	ann := e.ContactByEmail("ann@example.com")
	c := e.SignedIn(models.RoleViewer)
	base := "/w/default/contacts/" + ann.ID

	first := c.Get(base)
	handlerstest.ExpectStatus(t, "first page", first, http.StatusOK)
	handlerstest.ExpectBody(t, "first page", first, `data-page="1"`, `data-testid="timeline-older"`, `href="`+base+`?page=2"`, "Page 1 of ")
	if n := strings.Count(first.Body, `class="tl-item `); n != 50 {
		t.Fatalf("first page shows %d entries, want 50", n)
	}
	if !strings.Contains(first.Body, "form_submitted from Web form") {
		t.Fatal("first page lacks the newest events")
	}

	// The newest event is on page 1, the oldest (Ann00's) on the last page only.
	second := c.Get(base + "?page=2")
	handlerstest.ExpectBody(t, "second page by URL", second, `data-page="2"`, `rel="prev"`, "<html")
	frag := c.Get(base+"?page=2", "HX-Request", "true")
	handlerstest.ExpectStatus(t, "older entries fragment", frag, http.StatusOK)
	handlerstest.ExpectBody(t, "older entries fragment", frag, `data-page="2"`)
	if strings.Contains(frag.Body, "<html") {
		t.Fatal("the older-entries answer to htmx is not a fragment")
	}
	if strings.Contains(first.Body, `Ann00&#34;`) {
		t.Fatal("the oldest entry is on the first page")
	}
	last := c.Get(base + "?page=999")
	handlerstest.ExpectBody(t, "page past the end", last, `rel="prev"`)
	if strings.Contains(last.Body, `data-testid="timeline-older"`) {
		t.Fatal("the last page offers older entries")
	}
	if !strings.Contains(last.Body, "Entered Discovered") || !strings.Contains(last.Body, `Ann00&#34;`) {
		t.Fatal("the last page lacks the oldest entry (entering the first stage)")
	}
}

func TestUIContactShowsItsStagePath(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	src := e.SeedSource("Web form")
	now := time.Now().UTC()
	e.Apply(src, handlerstest.Lead{Email: "bo@example.com", Stage: "Discovered", At: now.Add(-74 * time.Hour)})
	e.Apply(src, handlerstest.Lead{Email: "bo@example.com", Stage: "Engaged", At: now.Add(-30 * time.Hour)})
	e.Apply(src, handlerstest.Lead{Email: "bo@example.com", Stage: "SQL", At: now.Add(-2 * time.Hour)})
	e.Apply(src, handlerstest.Lead{Email: "cy@example.com", Stage: "Discovered", At: now.Add(-time.Hour)})
	c := e.SignedIn(models.RoleViewer)

	bo := c.Get("/w/default/contacts/" + e.ContactByEmail("bo@example.com").ID)
	handlerstest.ExpectBody(t, "bo's page", bo, `data-testid="stage-path"`, "Discovered → Engaged → SQL, 3 days")
	cy := c.Get("/w/default/contacts/" + e.ContactByEmail("cy@example.com").ID)
	handlerstest.ExpectBody(t, "cy's page", cy, `data-testid="stage-path"`)
	if strings.Contains(cy.Body, "Discovered →") || !strings.Contains(cy.Body, "</span> Discovered</p>") {
		t.Fatalf("a contact in its first stage has a one-stage path")
	}
}
