package crm_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/crmfake"
)

// hsSearches counts the contact searches the fake received.
func hsSearches(fake *crmfake.HubSpot) int {
	n := 0
	for _, r := range fake.Requests() {
		if r.Method == http.MethodPost && r.Path == "/crm/v3/objects/contacts/search" {
			n++
		}
	}
	return n
}

// A lead whose email HubSpot does not hold is also looked up by phone among the contacts without an email:
// the contact HubSpot holds by phone alone ("(415) 555-0134", from a call) is that person and gets the
// email, instead of a second record. A contact with another email and the same phone is someone else.
func TestHubSpotEmailLeadMatchesAnEmaillessContactByPhone(t *testing.T) {
	t.Parallel()
	fake, d := newHS(t, crmfake.HSOptions{})
	byPhone := fake.AddContact(map[string]string{"phone": "(415) 555-0134", "firstname": "Pat"})
	other := fake.AddContact(map[string]string{"email": "sam@example.com", "phone": "(415) 555-0134"})
	r := upsertOne(t, d, crm.Contact{LeadgateID: "lg-1", Email: "pat@example.com", Phone: "+14155550134", LastName: "Lee"})
	mustOK(t, r)
	if r.RemoteID != byPhone || r.Created {
		t.Errorf("RemoteID=%q Created=%v, want the email-less contact %s (not %s) updated", r.RemoteID, r.Created, byPhone, other)
	}
	if c, _ := fake.Contact("pat@example.com"); c.ID != byPhone || c.Properties["lastname"] != "Lee" || len(fake.Contacts()) != 2 {
		t.Errorf("contact %+v, contacts %d; want %s to hold the email and no third record", c, len(fake.Contacts()), byPhone)
	}
	if c, _ := fake.Contact("sam@example.com"); c.Properties["lastname"] != "" {
		t.Errorf("the other person's contact was written: %v", c.Properties)
	}
	if n := hsSearches(fake); n != 1 {
		t.Errorf("searches = %d, want 1 (the contacts without email, read once for the batch)", n)
	}

	// Two new leads with different emails and that one phone are two people: one takes the record.
	fake2, d2 := newHS(t, crmfake.HSOptions{})
	only := fake2.AddContact(map[string]string{"phone": "+1 415 555 0188"})
	res := d2.Upsert(context.Background(), []crm.Contact{
		{LeadgateID: "a", Email: "a@example.com", Phone: "+14155550188"}, {LeadgateID: "b", Email: "b@example.com", Phone: "+14155550188"}})
	mustOK(t, res[0])
	mustOK(t, res[1])
	if res[0].RemoteID != only || res[1].RemoteID == only || !res[1].Created {
		t.Errorf("results %+v / %+v, want a on %s and b a new record", res[0], res[1], only)
	}
}

// With many contacts without an email, reading them all would cost more than searching the lead's phone
// forms: the lead is searched instead, and still found.
func TestHubSpotEmailLeadPhoneLookupSearchesTheLeadWhenManyContactsLackAnEmail(t *testing.T) {
	t.Parallel()
	fake, d := newHS(t, crmfake.HSOptions{})
	for i := range 450 {
		fake.AddContact(map[string]string{"phone": fmt.Sprintf("+1 212 555 %04d", i)})
	}
	byPhone := fake.AddContact(map[string]string{"phone": "415.555.0134"})
	r := upsertOne(t, d, crm.Contact{LeadgateID: "lg-1", Email: "pat@example.com", Phone: "+14155550134"})
	mustOK(t, r)
	if r.RemoteID != byPhone {
		t.Errorf("RemoteID = %q, want %s", r.RemoteID, byPhone)
	}
	if n := hsSearches(fake); n != 2 {
		t.Errorf("searches = %d, want 2 (the first page of contacts without email, then the lead's phone forms)", n)
	}
}
