package apply_test

import (
	"testing"

	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/models"
)

// TestFieldPrecedence proves DESIGN.md's field rules on the real store: a
// human correction beats later enrichment (even from the top source), an
// empty value never erases, a retried observation gains no recency, first
// touch is written once, and re-running an applied event changes nothing.
func TestFieldPrecedence(t *testing.T) {
	e := newEnv(t)
	rules := lifecycle.DefaultRules()
	rules.SourcePrecedence = []string{"Clearbit"}
	e.saveRules(e.ws, rules)
	form := e.source(e.ws, "Web form", "web_form", map[string]string{"form_submitted": "Discovered"})
	enrich := e.source(e.ws, "Clearbit", "enrichment", nil)
	email := e.source(e.ws, "Instantly", "email", map[string]string{"email_replied": "Engaged"})
	const who = "jane@example.com"

	first := e.insert(form, lead{Type: "form_submitted", At: at(10), Email: who, FirstName: "Jane",
		Fields: map[string]any{"industry": "Retail", "budget": "10k"}, Attribution: map[string]any{"utm_source": "ads", "utm_campaign": "fall"}})
	e.apply(first)

	t.Run("HumanCorrectionSurvivesEnrichment", func(t *testing.T) {
		c := e.contactByEmail(e.ws, who)
		if _, err := e.applier.CorrectField(e.ctx, e.ws, c.ID, "industry", "Fintech", "ops@example.com"); err != nil {
			t.Fatalf("correct: %v", err)
		}
		e.apply(e.insert(enrich, lead{Type: "enriched", At: at(20), Email: who, Fields: map[string]any{"industry": "Banking", "employees": "250"}}))
		c = e.contactByEmail(e.ws, who)
		if c.Fields["industry"] != "Fintech" {
			t.Errorf("industry = %q after enrichment, want the human correction Fintech", c.Fields["industry"])
		}
		if c.Fields["employees"] != "250" {
			t.Errorf("employees = %q, want enrichment's 250 (nothing human overrides it)", c.Fields["employees"])
		}
	})

	t.Run("EmptyValueDoesNotErase", func(t *testing.T) {
		e.apply(e.insert(form, lead{Type: "form_submitted", At: at(30), Email: who, Fields: map[string]any{"budget": "", "employees": nil}}))
		c := e.contactByEmail(e.ws, who)
		if c.Fields["budget"] != "10k" || c.Fields["employees"] != "250" {
			t.Errorf("fields = %v; an empty or null value must not erase budget=10k / employees=250", c.Fields)
		}
	})

	t.Run("RetriedObservationGainsNoAuthority", func(t *testing.T) {
		// budget 20k at t=40, then the sender retries its t=35 delivery (a new
		// delivery id, the same occurred_at) after it: the retry is still older.
		e.apply(e.insert(form, lead{Type: "form_submitted", At: at(40), Email: who, Fields: map[string]any{"budget": "20k"}}))
		e.apply(e.insert(form, lead{Type: "form_submitted", At: at(35), Email: who, Fields: map[string]any{"budget": "15k"}}))
		c := e.contactByEmail(e.ws, who)
		if c.Fields["budget"] != "20k" {
			t.Errorf("budget = %q, want 20k: the late retry of an older observation must not win by arriving last", c.Fields["budget"])
		}
	})

	t.Run("FirstTouchSurvives", func(t *testing.T) {
		e.apply(e.insert(email, lead{Type: "email_replied", At: at(50), Email: who, Attribution: map[string]any{"utm_source": "newsletter"}}))
		c := e.contactByEmail(e.ws, who)
		want := map[string]string{"source": "Web form", "channel": "web_form", "utm_source": "ads", "utm_campaign": "fall",
			"event_type": "form_submitted", "first_seen_at": at(10).Format("2006-01-02T15:04:05Z07:00")}
		for k, v := range want {
			if c.FirstTouch[k] != v {
				t.Errorf("first_touch[%s] = %q, want %q (all: %v)", k, c.FirstTouch[k], v, c.FirstTouch)
			}
		}
		if c.Stage != "Engaged" {
			t.Errorf("stage = %q, want Engaged", c.Stage)
		}
	})

	t.Run("RepeatDeliveryChangesNothing", func(t *testing.T) {
		before := e.contactByEmail(e.ws, who)
		outbox := e.count(`SELECT count(*) FROM outbox`)
		obs := e.count(`SELECT count(*) FROM observations`)
		for range 3 {
			e.apply(first)
		}
		after := e.contactByEmail(e.ws, who)
		if after.Version != before.Version || after.SubmissionCount != before.SubmissionCount || after.Score != before.Score {
			t.Errorf("re-applying an applied event changed the contact: version %d->%d, submissions %d->%d",
				before.Version, after.Version, before.SubmissionCount, after.SubmissionCount)
		}
		if n := e.count(`SELECT count(*) FROM outbox`); n != outbox {
			t.Errorf("outbox rows %d -> %d after re-applying", outbox, n)
		}
		if n := e.count(`SELECT count(*) FROM observations`); n != obs {
			t.Errorf("observations %d -> %d after re-applying", obs, n)
		}
		if got := e.event(first).Status; got != models.EventApplied {
			t.Errorf("first event status = %q, want applied", got)
		}
	})
}

// TestMergeKeepsEarliestFirstTouch: a phone-only voice call, then an
// email-only reply, then a form update with both: the two contacts merge, the
// survivor keeps the earliest first touch and the highest stage, and its
// history has no backward step.
func TestMergeKeepsEarliestFirstTouch(t *testing.T) {
	e := newEnv(t)
	voice := e.source(e.ws, "Vapi", "voice", map[string]string{"call_completed": "SQL"})
	mail := e.source(e.ws, "Instantly", "email", map[string]string{"email_replied": "Engaged"})
	form := e.source(e.ws, "Web form", "web_form", map[string]string{"form_submitted": "Discovered"})
	const who, phone = "sam@example.com", "+14155550134"

	e.apply(e.insert(voice, lead{Type: "call_completed", At: at(1), Phone: phone, Attribution: map[string]any{"utm_source": "cold-call"}}))
	e.apply(e.insert(mail, lead{Type: "email_replied", At: at(2), Email: who, Attribution: map[string]any{"utm_source": "newsletter"}}))
	// A profile update proposes no stage; it only links the email and the phone.
	formID := e.insert(form, lead{Type: "profile_updated", At: at(3), Email: who, Phone: phone})
	e.apply(formID)

	if n := e.count(`SELECT count(*) FROM contacts WHERE merged_into IS NULL`); n != 1 {
		t.Fatalf("live contacts = %d, want 1 after the linking form", n)
	}
	c := e.contactByEmail(e.ws, who)
	if c.Phone == nil || *c.Phone != phone {
		t.Errorf("phone = %v, want %s", c.Phone, phone)
	}
	if c.Stage != "SQL" {
		t.Errorf("stage = %q, want SQL (the higher of the merged contacts)", c.Stage)
	}
	if c.FirstTouch["utm_source"] != "cold-call" || c.FirstTouch["source"] != "Vapi" {
		t.Errorf("first_touch = %v, want the voice call's (seen first)", c.FirstTouch)
	}
	if c.SubmissionCount != 3 {
		t.Errorf("submission_count = %d, want 3", c.SubmissionCount)
	}
	if got := e.event(formID); got.Status != models.EventApplied || got.ContactID == nil || *got.ContactID != c.ID {
		t.Errorf("form event = %s/%v, want applied to %s", got.Status, got.ContactID, c.ID)
	}
	hist, err := e.store.StageHistoryForContact(e.ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	rules := lifecycle.DefaultRules()
	for _, h := range hist {
		if rules.Rank(h.ToStage) <= rankOrNone(rules, h.FromStage) {
			t.Errorf("history moves backwards: %s -> %s (%s)", h.FromStage, h.ToStage, h.Reason)
		}
	}
	if len(hist) != 3 {
		t.Errorf("history rows = %d, want 3 (both contacts' entries and the merge's Engaged -> SQL): %+v", len(hist), hist)
	}
}

func rankOrNone(r lifecycle.Rules, stage string) int {
	if stage == "" {
		return -1
	}
	return r.Rank(stage)
}
