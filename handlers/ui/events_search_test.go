package ui_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/leadgate/leadgate/handlers/handlerstest"
	"github.com/leadgate/leadgate/models"
)

// The events page finds a lead's events by email or phone, written as a
// person would type them, and says plainly when the search is neither.
func TestUIEventsSearchByEmailOrPhone(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	src := e.SeedSource("Web form")
	e.Apply(src, handlerstest.Lead{Email: "ann@example.com", Stage: "Discovered"})
	e.Apply(src, handlerstest.Lead{Email: "ann@example.com", Phone: "+14155550134", Stage: "Engaged"})
	e.Apply(src, handlerstest.Lead{Phone: "+442079460958", Stage: "Discovered"})
	e.Apply(src, handlerstest.Lead{Email: "bo@example.com", Stage: "Discovered"})
	c := e.SignedIn(models.RoleViewer)
	rows := func(res handlerstest.Response) int {
		t.Helper()
		handlerstest.ExpectStatus(t, "events", res, http.StatusOK)
		_, body, _ := strings.Cut(res.Body, "<tbody>")
		body, _, _ = strings.Cut(body, "</tbody>")
		return strings.Count(body, "<tr>")
	}
	if n := rows(c.Get("/w/default/events")); n != 4 {
		t.Fatalf("unfiltered: %d rows, want 4", n)
	}
	byEmail := c.Get("/w/default/events?lead=" + "%20Ann@Example.COM")
	if n := rows(byEmail); n != 2 {
		t.Fatalf("by email: %d rows, want ann's 2", n)
	}
	handlerstest.ExpectBody(t, "by email", byEmail, `name="lead" value="Ann@Example.COM"`, "ann@example.com")
	if strings.Contains(byEmail.Body, "bo@example.com") {
		t.Fatal("another lead's event matched")
	}
	// A phone as typed in national style with spaces, and the same event's contact by its other identity.
	if n := rows(c.Get("/w/default/events?lead=%2B44%2020%207946%200958")); n != 1 {
		t.Fatalf("by phone: %d rows, want 1", n)
	}
	if n := rows(c.Get("/w/default/events?lead=%2B1%20415-555-0134")); n != 2 {
		t.Fatalf("by ann's phone: %d rows, want both of ann's events (one through her contact)", n)
	}
	bad := c.Get("/w/default/events?lead=hello")
	handlerstest.ExpectStatus(t, "bad search", bad, http.StatusOK)
	handlerstest.ExpectBody(t, "bad search", bad, `role="alert"`, "is neither an email address nor a phone number", `aria-invalid`, "No events match")
}
