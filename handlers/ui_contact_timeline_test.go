package handlers_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/models"
)

func TestUIContactTimelinePagesOlderEntries(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)
	src := e.seedSource("Web form")
	start := time.Now().UTC().Add(-48 * time.Hour)
	for i := range 40 {
		e.apply(src, lead{email: "ann@example.com", first: fmt.Sprintf("Ann%02d", i), stage: "Discovered", at: start.Add(time.Duration(i) * time.Minute)})
	}
	ann := e.contactByEmail("ann@example.com")
	c := e.signedIn(models.RoleViewer)
	base := "/w/default/contacts/" + ann.ID

	first := c.get(base)
	expectStatus(t, "first page", first, http.StatusOK)
	expectBody(t, "first page", first, `data-page="1"`, `data-testid="timeline-older"`, `href="`+base+`?page=2"`, "Page 1 of ")
	if n := strings.Count(first.body, `class="tl-item `); n != 50 {
		t.Fatalf("first page shows %d entries, want 50", n)
	}
	if !strings.Contains(first.body, "form_submitted from Web form") {
		t.Fatal("first page lacks the newest events")
	}

	// The newest event is on page 1, the oldest (Ann00's) on the last page only.
	second := c.get(base + "?page=2")
	expectBody(t, "second page by URL", second, `data-page="2"`, `rel="prev"`, "<html")
	frag := c.get(base+"?page=2", "HX-Request", "true")
	expectStatus(t, "older entries fragment", frag, http.StatusOK)
	expectBody(t, "older entries fragment", frag, `data-page="2"`)
	if strings.Contains(frag.body, "<html") {
		t.Fatal("the older-entries answer to htmx is not a fragment")
	}
	if strings.Contains(first.body, `Ann00&#34;`) {
		t.Fatal("the oldest entry is on the first page")
	}
	last := c.get(base + "?page=999")
	expectBody(t, "page past the end", last, `rel="prev"`)
	if strings.Contains(last.body, `data-testid="timeline-older"`) {
		t.Fatal("the last page offers older entries")
	}
	if !strings.Contains(last.body, "Entered Discovered") || !strings.Contains(last.body, `Ann00&#34;`) {
		t.Fatal("the last page lacks the oldest entry (entering the first stage)")
	}
}

func TestUIContactShowsItsStagePath(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)
	src := e.seedSource("Web form")
	now := time.Now().UTC()
	e.apply(src, lead{email: "bo@example.com", stage: "Discovered", at: now.Add(-74 * time.Hour)})
	e.apply(src, lead{email: "bo@example.com", stage: "Engaged", at: now.Add(-30 * time.Hour)})
	e.apply(src, lead{email: "bo@example.com", stage: "SQL", at: now.Add(-2 * time.Hour)})
	e.apply(src, lead{email: "cy@example.com", stage: "Discovered", at: now.Add(-time.Hour)})
	c := e.signedIn(models.RoleViewer)

	bo := c.get("/w/default/contacts/" + e.contactByEmail("bo@example.com").ID)
	expectBody(t, "bo's page", bo, `data-testid="stage-path"`, "Discovered → Engaged → SQL, 3 days")
	cy := c.get("/w/default/contacts/" + e.contactByEmail("cy@example.com").ID)
	expectBody(t, "cy's page", cy, `data-testid="stage-path"`)
	if strings.Contains(cy.body, "Discovered →") || !strings.Contains(cy.body, "</span> Discovered</p>") {
		t.Fatalf("a contact in its first stage has a one-stage path")
	}
}
