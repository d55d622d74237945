package crm_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/crmfake"
)

// opsFake is what the delete/merge contract tests need from each fake.
type opsFake struct {
	add     func(email string) string
	exists  func(id string) bool
	deleted func() []string
	fail    func(r crmfake.Response)
	tags    func(id string) []string
	notes   func(id string) []string
}

func opsFakes(t *testing.T) map[string]func() (opsFake, crm.Destination) {
	return map[string]func() (opsFake, crm.Destination){
		crm.KindActiveCampaign: func() (opsFake, crm.Destination) {
			f, d := newAC(t, crmfake.ACOptions{})
			get := func(id string) (crmfake.ACContact, bool) {
				i := slices.IndexFunc(f.Contacts(), func(c crmfake.ACContact) bool { return c.ID == id })
				if i < 0 {
					return crmfake.ACContact{}, false
				}
				return f.Contacts()[i], true
			}
			return opsFake{
				add:     func(e string) string { return f.AddContact(crmfake.ACContact{Email: e}) },
				exists:  func(id string) bool { _, ok := get(id); return ok },
				deleted: f.Deleted, fail: f.FailNext,
				tags:  func(id string) []string { c, _ := get(id); return c.Tags },
				notes: func(id string) []string { c, _ := get(id); return c.Notes },
			}, d
		},
		crm.KindGoHighLevel: func() (opsFake, crm.Destination) {
			f, d := newGHL(t, crmfake.GHLOptions{})
			get := func(id string) (crmfake.GHLContact, bool) {
				i := slices.IndexFunc(f.Contacts(), func(c crmfake.GHLContact) bool { return c.ID == id })
				if i < 0 {
					return crmfake.GHLContact{}, false
				}
				return f.Contacts()[i], true
			}
			return opsFake{
				add:     func(e string) string { return f.AddContact(crmfake.GHLContact{Email: e}) },
				exists:  func(id string) bool { _, ok := get(id); return ok },
				deleted: f.Deleted, fail: f.FailNext,
				tags:  func(id string) []string { c, _ := get(id); return c.Tags },
				notes: func(id string) []string { c, _ := get(id); return c.Notes },
			}, d
		},
		crm.KindHubSpot: func() (opsFake, crm.Destination) {
			f, d := newHS(t, crmfake.HSOptions{})
			get := func(id string) (crmfake.HSContact, bool) {
				i := slices.IndexFunc(f.Contacts(), func(c crmfake.HSContact) bool { return c.ID == id })
				if i < 0 {
					return crmfake.HSContact{}, false
				}
				return f.Contacts()[i], true
			}
			return opsFake{
				add:     func(e string) string { return f.AddContact(map[string]string{"email": e}) },
				exists:  func(id string) bool { _, ok := get(id); return ok },
				deleted: f.Deleted, fail: f.FailNext,
				notes: func(id string) []string { c, _ := get(id); return c.Notes },
			}, d
		},
	}
}

// Every adapter deletes a record by id; a record already gone (a retry after a lost answer) counts as
// deleted; a 503 is a transient error and deletes nothing.
func TestDeleteContactContract(t *testing.T) {
	t.Parallel()
	for kind, mk := range opsFakes(t) {
		t.Run(kind, func(t *testing.T) {
			f, d := mk()
			del, ok := d.(crm.Deleter)
			if !ok {
				t.Fatalf("%s adapter does not implement crm.Deleter", kind)
			}
			ctx := context.Background()
			keep, gone := f.add("keep@example.com"), f.add("gone@example.com")

			f.fail(crmfake.Response{Method: "DELETE", Status: 503, Body: `{"message":"Service Unavailable"}`})
			if err := del.DeleteContact(ctx, gone); crm.ClassOf(err) != crm.Transient {
				t.Errorf("delete during a 503: err = %v, want transient", err)
			}
			if !f.exists(gone) {
				t.Fatal("the 503 deleted the record")
			}
			if err := del.DeleteContact(ctx, gone); err != nil {
				t.Fatalf("delete: %v", err)
			}
			if err := del.DeleteContact(ctx, gone); err != nil {
				t.Errorf("deleting a record already gone: %v, want nil (404 counts as done)", err)
			}
			if f.exists(gone) || !f.exists(keep) || !slices.Equal(f.deleted(), []string{gone}) {
				t.Errorf("deleted %v (exists gone=%v keep=%v), want exactly [%s]", f.deleted(), f.exists(gone), f.exists(keep), gone)
			}
		})
	}
}

// ActiveCampaign and GoHighLevel have no merge endpoint: the loser's record is tagged for review with a
// note naming the survivor, the survivor is untouched, and a retry does not add a second tag.
func TestMergeContactsTagsTheDuplicateForReview(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{crm.KindActiveCampaign, crm.KindGoHighLevel} {
		t.Run(kind, func(t *testing.T) {
			f, d := opsFakes(t)[kind]()
			m, ok := d.(crm.Merger)
			if !ok {
				t.Fatalf("%s adapter does not implement crm.Merger", kind)
			}
			survivor, loser := f.add("jane@example.com"), f.add("jane.doe@example.com")
			merge := crm.Merge{SurvivorRemoteID: survivor, LoserRemoteID: loser, SurvivorLeadgateID: "lg-s", LoserLeadgateID: "lg-l"}
			for range 2 {
				if newID, err := m.MergeContacts(context.Background(), merge); err != nil || newID != "" {
					t.Fatalf("MergeContacts = %q, %v", newID, err)
				}
			}
			if tags := f.tags(loser); !slices.Equal(tags, []string{crm.MergeReviewTag}) {
				t.Errorf("loser tags %v, want [%s] once", tags, crm.MergeReviewTag)
			}
			notes := f.notes(loser)
			if len(notes) == 0 || !strings.Contains(notes[0], survivor) || !strings.Contains(notes[0], "lg-s") {
				t.Errorf("loser notes %q, want one naming the survivor %s", notes, survivor)
			}
			if len(f.tags(survivor)) != 0 || len(f.notes(survivor)) != 0 || !f.exists(loser) {
				t.Errorf("survivor tags %v notes %v; loser exists %v", f.tags(survivor), f.notes(survivor), f.exists(loser))
			}
			if _, err := m.MergeContacts(context.Background(), crm.Merge{SurvivorRemoteID: survivor, LoserRemoteID: "999999"}); err != nil {
				t.Errorf("merging a record that is gone: %v, want nil", err)
			}
		})
	}
}

// HubSpot merges through POST /crm/v3/objects/contacts/merge; the merged record may get a new id, which is
// returned. A retry after a lost answer (the old ids are gone) counts as done.
func TestHubSpotMergeContacts(t *testing.T) {
	t.Parallel()
	fake, d := newHS(t, crmfake.HSOptions{})
	survivor := fake.AddContact(map[string]string{"email": "jane@example.com", "firstname": "Jane"})
	loser := fake.AddContact(map[string]string{"email": "jane.doe@example.com", "phone": "+14155550134"})
	m := d.(crm.Merger)
	merge := crm.Merge{SurvivorRemoteID: survivor, LoserRemoteID: loser, SurvivorLeadgateID: "lg-s", LoserLeadgateID: "lg-l"}
	newID, err := m.MergeContacts(context.Background(), merge)
	if err != nil {
		t.Fatal(err)
	}
	merges := fake.Merges()
	if len(merges) != 1 || merges[0].PrimaryID != survivor || merges[0].MergedID != loser || newID != merges[0].NewID {
		t.Fatalf("merges %+v, returned id %q", merges, newID)
	}
	got := fake.Contacts()
	if len(got) != 1 || got[0].Properties["email"] != "jane@example.com" || got[0].Properties["phone"] != "+14155550134" {
		t.Errorf("contacts after merge %+v, want one with the primary's email and the other's phone", got)
	}
	if again, err := m.MergeContacts(context.Background(), merge); err != nil || again != "" || len(fake.Merges()) != 1 {
		t.Errorf("retried merge = %q, %v (merges %d), want done without a second merge", again, err, len(fake.Merges()))
	}
	fake.FailNext(crmfake.Response{Path: "/crm/v3/objects/contacts/merge", Status: 429, Header: map[string][]string{"Retry-After": {"1"}}})
	if _, err := m.MergeContacts(context.Background(), crm.Merge{SurvivorRemoteID: "1", LoserRemoteID: "2"}); crm.ClassOf(err) != crm.RateLimited {
		t.Errorf("merge during a 429: %v, want rate limited", err)
	}
}
