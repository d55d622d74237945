package ui_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/leadgate/leadgate/handlers/handlerstest"
	"github.com/leadgate/leadgate/models"
)

func TestUIContactSearchAndTimeline(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	src := e.SeedSource("Web form")
	c := e.SignedIn(models.RoleViewer)

	handlerstest.ExpectBody(t, "empty contacts", c.Get("/w/default/contacts"), `data-testid="empty-state"`, "No contacts yet")

	e.Apply(src, handlerstest.Lead{Email: "jane.doe@example.com", First: "Jane", Stage: "Engaged"})
	e.Apply(src, handlerstest.Lead{Phone: "+14155550134", First: "Bob", Stage: "Discovered"})
	jane := e.ContactByEmail("jane.doe@example.com")

	cases := []struct {
		name, query string
		want        []string
		not         string
	}{
		{"email in another spelling", "?q=" + url.QueryEscape(" Jane.Doe@EXAMPLE.com"), []string{"jane.doe@example.com", "Matched as a normalized email"}, ">Bob<"},
		{"phone in another format", "?q=" + url.QueryEscape("+1 (415) 555-0134"), []string{"+14155550134", "Matched as a normalized phone"}, ">Jane<"},
		{"part of a name", "?q=jan", []string{">Jane<"}, ">Bob<"},
		{"stage", "?stage=Discovered", []string{">Bob<"}, ">Jane<"},
		{"no match", "?q=nobody", []string{"No contact matches"}, ">Jane<"},
	}
	for _, tc := range cases {
		res := c.Get("/w/default/contacts" + tc.query)
		handlerstest.ExpectStatus(t, tc.name, res, http.StatusOK)
		handlerstest.ExpectBody(t, tc.name, res, tc.want...)
		if i := strings.Index(res.Body, tc.not); i >= 0 {
			t.Fatalf("%s: result shows %q: %s", tc.name, tc.not, res.Body[max(0, i-300):min(len(res.Body), i+100)])
		}
	}

	page := c.Get("/w/default/contacts/" + jane.ID)
	handlerstest.ExpectStatus(t, "contact page", page, http.StatusOK)
	handlerstest.ExpectBody(t, "contact page", page, `data-testid="timeline"`, "form_submitted from Web form", "Entered Engaged",
		"Fields observed", `data-testid="contact-first-touch"`, "utm_source")
	for _, form := range []string{"correct-form", "stage-form", "merge-form", "erase-form", "export-contact"} {
		if strings.Contains(page.Body, `data-testid="`+form+`"`) {
			t.Fatalf("viewer sees %s", form)
		}
	}
	handlerstest.ExpectStatus(t, "unknown contact", c.Get("/w/default/contacts/00000000-0000-0000-0000-000000000000"), http.StatusNotFound)
	handlerstest.ExpectStatus(t, "malformed id", c.Get("/w/default/contacts/nope"), http.StatusNotFound)
}

// TestUIContactActions walks every operator action on a contact as an admin:
// each lands in the audit history, and bad input comes back inline.
func TestUIContactActions(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	ctx := context.Background()
	src := e.SeedSource("Web form")
	e.Apply(src, handlerstest.Lead{Email: "jane@example.com", First: "Jane", Stage: "Discovered"})
	e.Apply(src, handlerstest.Lead{Phone: "+14155550199", First: "Janet", Stage: "Engaged"})
	jane := e.ContactByEmail("jane@example.com")
	dup, err := e.Store.ContactFindByPhone(ctx, e.WS.ID, "+14155550199")
	if err != nil {
		t.Fatal(err)
	}
	c := e.SignedIn(models.RoleAdmin)
	base := "/w/default/contacts/" + jane.ID
	page := c.Get(base)
	handlerstest.ExpectBody(t, "admin contact page", page, `data-testid="correct-form"`, `data-testid="erase-form"`, `list="field-names"`)

	invalid := []struct {
		name, path string
		form       url.Values
		field      string
	}{
		{"correction without a field", "/correct", url.Values{"value": {"x"}}, "field"},
		{"correction of the email", "/correct", url.Values{"field": {"email"}, "value": {"x@y.z"}}, "field"},
		{"stage change without a reason", "/stage", url.Values{"stage": {"SQL"}}, "reason"},
		{"stage change to an unknown stage", "/stage", url.Values{"stage": {"Moon"}, "reason": {"r"}}, "stage"},
		{"merge with nobody", "/merge", url.Values{"merge_with": {"ghost@example.com"}}, "merge_with"},
		{"merge with itself", "/merge", url.Values{"merge_with": {jane.ID}}, "merge_with"},
		{"erase without typing erase", "/erase", url.Values{"confirm": {"yes"}}, "confirm"},
	}
	before := len(e.AuditActions())
	for _, tc := range invalid {
		res := c.Post(base+tc.path, tc.form)
		handlerstest.ExpectStatus(t, tc.name, res, http.StatusUnprocessableEntity)
		handlerstest.ExpectBody(t, tc.name, res, `id="err-`+tc.field+`"`, `role="alert"`)
	}
	if n := len(e.AuditActions()); n != before {
		t.Fatalf("rejected forms wrote %d audit entries", n-before)
	}

	steps := []struct {
		action string
		path   string
		form   url.Values
		check  func(models.Contact) bool
	}{
		{"contact.correct_field", "/correct", url.Values{"field": {"company"}, "value": {"Acme Inc"}},
			func(c models.Contact) bool { return c.Company != nil && *c.Company == "Acme Inc" }},
		{"contact.set_stage", "/stage", url.Values{"stage": {"sql"}, "reason": {"Qualified on a call"}},
			func(c models.Contact) bool { return c.Stage == "SQL" }},
		{"contact.merge_manual", "/merge", url.Values{"merge_with": {"+1 415 555 0199"}},
			func(c models.Contact) bool { return c.Phone != nil && *c.Phone == "+14155550199" }},
	}
	for _, s := range steps {
		res := c.Post(base+s.path, s.form)
		handlerstest.ExpectRedirect(t, s.action, res, base)
		handlerstest.RequireAudit(t, e, s.action)
		got, _ := e.Store.ContactGet(ctx, e.WS.ID, jane.ID)
		if !s.check(got) {
			t.Fatalf("%s: contact after the action: %+v", s.action, got)
		}
	}
	handlerstest.ExpectBody(t, "flash and timeline", c.Get(base), "Corrected company", "Discovered → SQL", "Qualified on a call", "human correction by user:")
	if loser, _ := e.Store.ContactGet(ctx, e.WS.ID, dup.ID); loser.MergedInto == nil || *loser.MergedInto != jane.ID {
		t.Fatalf("merged contact does not point to the survivor: %+v", loser)
	}
	handlerstest.ExpectBody(t, "merged contact page", c.Get("/w/default/contacts/"+dup.ID), "This contact was merged")

	// Export: a JSON download of everything, audited.
	res := c.Get(base + "/export")
	handlerstest.ExpectStatus(t, "export", res, http.StatusOK)
	if cd := res.Header.Get("Content-Disposition"); !strings.Contains(cd, "attachment") || !strings.Contains(cd, jane.ID) {
		t.Fatalf("export Content-Disposition %q", cd)
	}
	var x struct {
		Contact struct{ Email string } `json:"contact"`
		Events  []json.RawMessage      `json:"events"`
	}
	if err := json.Unmarshal([]byte(res.Body), &x); err != nil || len(x.Events) < 2 {
		t.Fatalf("export body: %v %.300s", err, res.Body)
	}
	handlerstest.RequireAudit(t, e, "contact.export")

	// Erase (admin, typed confirmation).
	res = c.Post(base+"/erase", url.Values{"confirm": {"erase"}})
	handlerstest.ExpectRedirect(t, "erase", res, base)
	handlerstest.RequireAudit(t, e, "contact.erase")
	got, _ := e.Store.ContactGet(ctx, e.WS.ID, jane.ID)
	if got.ErasedAt == nil || got.Email != nil {
		t.Fatalf("contact not erased: %+v", got)
	}
	handlerstest.ExpectBody(t, "erased page", c.Get(base), "Personal data of this contact was erased")
}
