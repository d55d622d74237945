package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/leadgate/leadgate/models"
)

func TestUIContactSearchAndTimeline(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)
	src := e.seedSource("Web form")
	c := e.signedIn(models.RoleViewer)

	expectBody(t, "empty contacts", c.get("/w/default/contacts"), `data-testid="empty-state"`, "No contacts yet")

	e.apply(src, lead{email: "jane.doe@example.com", first: "Jane", stage: "Engaged"})
	e.apply(src, lead{phone: "+14155550134", first: "Bob", stage: "Discovered"})
	jane := e.contactByEmail("jane.doe@example.com")

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
		res := c.get("/w/default/contacts" + tc.query)
		expectStatus(t, tc.name, res, http.StatusOK)
		expectBody(t, tc.name, res, tc.want...)
		if i := strings.Index(res.body, tc.not); i >= 0 {
			t.Fatalf("%s: result shows %q: %s", tc.name, tc.not, res.body[max(0, i-300):min(len(res.body), i+100)])
		}
	}

	page := c.get("/w/default/contacts/" + jane.ID)
	expectStatus(t, "contact page", page, http.StatusOK)
	expectBody(t, "contact page", page, `data-testid="timeline"`, "form_submitted from Web form", "Entered Engaged",
		"Fields observed", `data-testid="contact-first-touch"`, "utm_source")
	for _, form := range []string{"correct-form", "stage-form", "merge-form", "erase-form", "export-contact"} {
		if strings.Contains(page.body, `data-testid="`+form+`"`) {
			t.Fatalf("viewer sees %s", form)
		}
	}
	expectStatus(t, "unknown contact", c.get("/w/default/contacts/00000000-0000-0000-0000-000000000000"), http.StatusNotFound)
	expectStatus(t, "malformed id", c.get("/w/default/contacts/nope"), http.StatusNotFound)
}

// TestUIContactActions walks every operator action on a contact as an admin:
// each lands in the audit history, and bad input comes back inline.
func TestUIContactActions(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)
	ctx := context.Background()
	src := e.seedSource("Web form")
	e.apply(src, lead{email: "jane@example.com", first: "Jane", stage: "Discovered"})
	e.apply(src, lead{phone: "+14155550199", first: "Janet", stage: "Engaged"})
	jane := e.contactByEmail("jane@example.com")
	dup, err := e.store.ContactFindByPhone(ctx, e.ws.ID, "+14155550199")
	if err != nil {
		t.Fatal(err)
	}
	c := e.signedIn(models.RoleAdmin)
	base := "/w/default/contacts/" + jane.ID
	page := c.get(base)
	expectBody(t, "admin contact page", page, `data-testid="correct-form"`, `data-testid="erase-form"`, `list="field-names"`)

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
	before := len(e.auditActions())
	for _, tc := range invalid {
		res := c.post(base+tc.path, tc.form)
		expectStatus(t, tc.name, res, http.StatusUnprocessableEntity)
		expectBody(t, tc.name, res, `id="err-`+tc.field+`"`, `role="alert"`)
	}
	if n := len(e.auditActions()); n != before {
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
		res := c.post(base+s.path, s.form)
		expectRedirect(t, s.action, res, base)
		requireAudit(t, e, s.action)
		got, _ := e.store.ContactGet(ctx, e.ws.ID, jane.ID)
		if !s.check(got) {
			t.Fatalf("%s: contact after the action: %+v", s.action, got)
		}
	}
	expectBody(t, "flash and timeline", c.get(base), "Corrected company", "Discovered → SQL", "Qualified on a call", "human correction by user:")
	if loser, _ := e.store.ContactGet(ctx, e.ws.ID, dup.ID); loser.MergedInto == nil || *loser.MergedInto != jane.ID {
		t.Fatalf("merged contact does not point to the survivor: %+v", loser)
	}
	expectBody(t, "merged contact page", c.get("/w/default/contacts/"+dup.ID), "This contact was merged")

	// Export: a JSON download of everything, audited.
	res := c.get(base + "/export")
	expectStatus(t, "export", res, http.StatusOK)
	if cd := res.header.Get("Content-Disposition"); !strings.Contains(cd, "attachment") || !strings.Contains(cd, jane.ID) {
		t.Fatalf("export Content-Disposition %q", cd)
	}
	var x struct {
		Contact struct{ Email string } `json:"contact"`
		Events  []json.RawMessage      `json:"events"`
	}
	if err := json.Unmarshal([]byte(res.body), &x); err != nil || len(x.Events) < 2 {
		t.Fatalf("export body: %v %.300s", err, res.body)
	}
	requireAudit(t, e, "contact.export")

	// Erase (admin, typed confirmation).
	res = c.post(base+"/erase", url.Values{"confirm": {"erase"}})
	expectRedirect(t, "erase", res, base)
	requireAudit(t, e, "contact.erase")
	got, _ := e.store.ContactGet(ctx, e.ws.ID, jane.ID)
	if got.ErasedAt == nil || got.Email != nil {
		t.Fatalf("contact not erased: %+v", got)
	}
	expectBody(t, "erased page", c.get(base), "Personal data of this contact was erased")
}
