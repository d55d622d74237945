//go:build proof

package apply_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/models"
)

// person is one simulated lead of the race.
type person struct {
	email, phone string
}

func people(n int, domain string) []person {
	out := make([]person, n)
	for i := range out {
		out[i] = person{email: fmt.Sprintf("p%03d@%s", i, domain), phone: fmt.Sprintf("+1415200%04d", i)}
	}
	return out
}

// channels are the four sources every person reaches leadgate through.
type channels struct {
	form, mail, voice, crm swSource
}

func (s *stack) channels() channels {
	return channels{
		form:  s.source("Web form", "web_form", map[string]string{"form_submitted": "Discovered"}, false),
		mail:  s.source("Instantly", "cold_email", map[string]string{"email_replied": "Engaged"}, false),
		voice: s.source("Vapi", "voice", map[string]string{"call_completed": "SQL"}, true),
		crm:   s.source("HubSpot", "crm", map[string]string{"deal_won": "Closed"}, false),
	}
}

// journey is one person's four deliveries: form (email+phone) -> email reply
// (email only) -> voice call (phone only) -> closed deal (email only), one
// second apart from t0.
func (ch channels) journey(i int, p person, t0 time.Time) []delivery {
	ts := func(sec int) string { return t0.Add(time.Duration(sec) * time.Second).Format(time.RFC3339Nano) }
	body := func(m map[string]any) []byte { b, _ := json.Marshal(m); return b }
	return []delivery{
		{ch.form, fmt.Sprintf("form-%d", i), body(map[string]any{"event_type": "form_submitted", "occurred_at": ts(1), "email": p.email,
			"phone": p.phone, "first_name": "Lead", "last_name": fmt.Sprint(i), "fields": map[string]any{"budget": "10k"},
			"attribution": map[string]any{"utm_source": "ads"}})},
		{ch.mail, fmt.Sprintf("mail-%d", i), body(map[string]any{"event_type": "email_replied", "occurred_at": ts(2), "email": p.email,
			"fields": map[string]any{"reply": "interested"}})},
		{ch.voice, fmt.Sprintf("call-%d", i), body(map[string]any{"event_type": "call_completed", "occurred_at": ts(3), "phone": p.phone,
			"fields": map[string]any{"call_summary": "qualified"}})},
		{ch.crm, fmt.Sprintf("deal-%d", i), body(map[string]any{"event_type": "deal_won", "occurred_at": ts(4), "email": p.email,
			"fields": map[string]any{"deal_value": "12000"}})},
	}
}

// withDuplicates shuffles deliveries and repeats about a third of them
// (same webhook-id), returning how many repeats it added.
func withDuplicates(rng *rand.Rand, ds []delivery) ([]delivery, int) {
	out := append([]delivery(nil), ds...)
	dups := 0
	for _, d := range ds {
		if rng.IntN(3) == 0 {
			out = append(out, d)
			dups++
		}
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out, dups
}

// TestRaceAcrossProcesses: 200 people × 4 channels, shuffled and partly
// duplicated, through the real HTTP ingest, applied by two separate worker
// processes (8 asynq workers each). Then true regressions (newer, lower) and
// late arrivals (older, lower) for some of them.
func TestRaceAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	leadgateBinary(t)
	start := time.Now()
	s := newStack(t)
	s.putRules(raceRules())
	ch := s.channels()
	s.worker("A")
	s.worker("B")

	const n = 200
	ps := people(n, "race.test")
	t0 := time.Now().UTC().Add(-10 * time.Minute).Truncate(time.Second)
	var first []delivery
	for i, p := range ps {
		first = append(first, ch.journey(i, p, t0)...)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	sent, dups := withDuplicates(rng, first)
	answers := s.sendAll(sent, 16)
	t.Logf("phase 1: %d deliveries sent in %s", len(sent), time.Since(start).Round(time.Millisecond))
	if answers["queued"] != len(first) || answers["duplicate"] != dups {
		t.Fatalf("ingest answers %v, want %d queued and %d duplicate", answers, len(first), dups)
	}
	st := s.settle(int64(len(first)), 60*time.Second, nil)
	t.Logf("phase 1: %d deliveries (%d repeats) applied in %s: %+v", len(sent), dups, time.Since(start).Round(time.Millisecond), st.Events)

	// Phase 2: every 10th person gets a true regression (newer than the
	// close, proposing Engaged); every 10th+5 a late arrival (older than
	// anything, proposing Engaged). Shuffled and partly repeated too.
	var second []delivery
	regressions, lates := map[string]bool{}, map[string]bool{}
	for i, p := range ps {
		switch i % 10 {
		case 0:
			id := fmt.Sprintf("regress-%d", i)
			second = append(second, delivery{ch.mail, id, mustJSON(map[string]any{"event_type": "email_replied", "email": p.email,
				"occurred_at": t0.Add(time.Minute).Format(time.RFC3339Nano)})})
			regressions[p.email] = true
		case 5:
			id := fmt.Sprintf("late-%d", i)
			second = append(second, delivery{ch.mail, id, mustJSON(map[string]any{"event_type": "email_replied", "email": p.email,
				"occurred_at": t0.Add(-time.Minute).Format(time.RFC3339Nano)})})
			lates[p.email] = true
		}
	}
	sent2, dups2 := withDuplicates(rng, second)
	s.sendAll(sent2, 8)
	total := int64(len(first) + len(second))
	st = s.settle(total, 30*time.Second, nil)
	t.Logf("phase 2: %d more deliveries; stats %+v, dead letters %d, outbox pending %d", len(sent2), st.Events, st.DeadLetters, st.OutboxPending)

	want := models.EventCounts{Received: total + int64(dups+dups2), Accepted: total, Duplicates: int64(dups + dups2)}
	if st.Events.Received != want.Received || st.Events.Duplicates != want.Duplicates || st.Events.Unresolved != 0 {
		t.Errorf("stats %+v, want received %d, duplicates %d, unresolved 0", st.Events, want.Received, want.Duplicates)
	}
	if st.Events.Quarantined != int64(len(regressions)) || st.DeadLetters != int64(len(regressions)) {
		t.Errorf("quarantined %d, open dead letters %d; want %d (the regressions, nothing else)", st.Events.Quarantined, st.DeadLetters, len(regressions))
	}
	checkContacts(t, s, ps, raceRules())
	checkOutcomes(t, s)
	checkOutbox(t, s)

	// Regressions are dead letters with reasons; late arrivals are not.
	rows := []struct {
		Email, Status, Reason string
		DLKind, DLReason      *string
	}{}
	err := s.store.DB().Raw(`SELECT e.email, e.status, e.reason, d.kind AS dl_kind, d.reason AS dl_reason FROM events e
		LEFT JOIN dead_letters d ON d.event_id = e.id WHERE e.occurred_at IN (?, ?)`, t0.Add(time.Minute), t0.Add(-time.Minute)).Scan(&rows).Error
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(regressions)+len(lates) {
		t.Fatalf("found %d phase-2 events, want %d", len(rows), len(regressions)+len(lates))
	}
	for _, r := range rows {
		switch {
		case regressions[r.Email]:
			if r.Status != models.EventQuarantined || r.DLKind == nil || *r.DLKind != lifecycle.KindStateConflict ||
				!strings.Contains(*r.DLReason, "regression Closed -> Engaged") {
				t.Errorf("regression for %s: status %s, dead letter %v %v; want quarantined state_conflict with its reason", r.Email, r.Status, r.DLKind, r.DLReason)
			}
		case lates[r.Email]:
			if (r.Status != models.EventUnchanged && r.Status != models.EventApplied) || r.DLKind != nil || !strings.Contains(r.Reason, "late event") {
				t.Errorf("late arrival for %s: status %s (%s), dead letter %v; want unchanged/applied as a late event, no dead letter", r.Email, r.Status, r.Reason, r.DLKind)
			}
		}
	}
	t.Logf("race test total %s", time.Since(start).Round(time.Millisecond))
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// checkContacts: one live contact per person, carrying both identities, at
// the highest stage it reached, with no backward step in its history, and a
// submission count equal to its applied events (nothing applied twice).
func checkContacts(t *testing.T, s *stack, ps []person, rules lifecycle.Rules) {
	t.Helper()
	var live int64
	s.store.DB().Raw(`SELECT count(*) FROM contacts WHERE merged_into IS NULL`).Scan(&live)
	if live != int64(len(ps)) {
		t.Errorf("live contacts = %d, want %d (one per person)", live, len(ps))
	}
	var merged int64
	s.store.DB().Raw(`SELECT count(*) FROM contacts WHERE merged_into IS NOT NULL`).Scan(&merged)
	bad := 0
	for _, p := range ps {
		c, err := s.store.ContactFindByEmail(s.ctx, s.ws, p.email)
		if err != nil {
			t.Errorf("%s: %v", p.email, err)
			continue
		}
		problems := []string{}
		if c.Phone == nil || *c.Phone != p.phone {
			problems = append(problems, fmt.Sprintf("phone %v, want %s", c.Phone, p.phone))
		}
		hist, err := s.store.StageHistoryForContact(s.ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		highest := -1
		for _, h := range hist {
			if rules.Rank(h.ToStage) <= rankOrNone(rules, h.FromStage) {
				problems = append(problems, fmt.Sprintf("history step backwards %s -> %s", h.FromStage, h.ToStage))
			}
			highest = max(highest, rules.Rank(h.ToStage))
		}
		if c.Stage != "Closed" || rules.Rank(c.Stage) != highest {
			problems = append(problems, fmt.Sprintf("stage %s, want Closed = the highest reached (rank %d)", c.Stage, highest))
		}
		var counted int64
		s.store.DB().Raw(`SELECT count(*) FROM events WHERE contact_id = ? AND status IN ('applied', 'unchanged')`, c.ID).Scan(&counted)
		if int64(c.SubmissionCount) != counted {
			problems = append(problems, fmt.Sprintf("submission_count %d, but %d events applied to it", c.SubmissionCount, counted))
		}
		if c.FirstTouch["utm_source"] == "" && c.FirstTouch["source"] == "" {
			problems = append(problems, "no first touch")
		}
		if len(problems) > 0 {
			bad++
			if bad <= 10 {
				t.Errorf("%s (%s): %s", p.email, c.ID, strings.Join(problems, "; "))
			}
		}
	}
	t.Logf("%d live contacts (%d merged into them), %d with problems", live, merged, bad)
}

// checkOutcomes: every accepted event has exactly one final outcome, a
// quarantined event exactly one open dead letter and no other event any.
func checkOutcomes(t *testing.T, s *stack) {
	t.Helper()
	var rows []struct {
		Status string
		N      int64
		DL     int64
	}
	s.store.DB().Raw(`SELECT e.status, count(*) AS n, count(d.id) AS dl FROM events e
		LEFT JOIN dead_letters d ON d.event_id = e.id AND d.status = 'open' GROUP BY e.status`).Scan(&rows)
	for _, r := range rows {
		switch r.Status {
		case models.EventApplied, models.EventUnchanged, models.EventDropped, models.EventRejected:
			if r.DL != 0 {
				t.Errorf("%d %s events have dead letters", r.DL, r.Status)
			}
		case models.EventQuarantined:
			if r.DL != r.N {
				t.Errorf("%d quarantined events but %d dead letters", r.N, r.DL)
			}
		default:
			t.Errorf("%d events still %s", r.N, r.Status)
		}
	}
	var multi int64
	s.store.DB().Raw(`SELECT count(*) FROM (SELECT event_id FROM dead_letters WHERE event_id IS NOT NULL GROUP BY event_id HAVING count(*) > 1) x`).Scan(&multi)
	if multi != 0 {
		t.Errorf("%d events have more than one dead letter", multi)
	}
}

// checkOutbox: each contact's CRM intents are versions 1..version, once
// each; each side effect happened at most once per person (start_onboarding
// once per contact record created, so once per person plus once per merged
// duplicate record).
func checkOutbox(t *testing.T, s *stack) {
	t.Helper()
	var gaps []struct {
		ID      string
		Version int64
		N       int64
		Max     int64
	}
	s.store.DB().Raw(`SELECT c.id, c.version, count(o.id) AS n, coalesce(max(o.version), 0) AS max FROM contacts c
		LEFT JOIN outbox o ON o.contact_id = c.id AND o.kind = 'crm_upsert' GROUP BY c.id, c.version
		HAVING count(o.id) <> c.version OR coalesce(max(o.version), 0) <> c.version OR count(DISTINCT o.version) <> count(o.id)`).Scan(&gaps)
	for i, g := range gaps {
		if i < 10 {
			t.Errorf("contact %s at version %d has %d crm_upsert rows (max version %d), want exactly versions 1..%d", g.ID, g.Version, g.N, g.Max, g.Version)
		}
	}
	var effects []struct {
		Person  string
		Action  string
		N       int64
		Lineage int64
	}
	s.store.DB().Raw(`WITH lineage AS (SELECT id, coalesce(merged_into, id) AS person FROM contacts)
		SELECT l.person, o.action, count(*) AS n, (SELECT count(*) FROM lineage x WHERE x.person = l.person) AS lineage
		FROM outbox o JOIN lineage l ON l.id = o.contact_id WHERE o.kind = 'side_effect' GROUP BY l.person, o.action`).Scan(&effects)
	totals := map[string]int64{}
	for _, e := range effects {
		totals[e.Action] += e.N
		limit := int64(1)
		if e.Action == "start_onboarding" {
			limit = e.Lineage
		}
		if e.N > limit {
			t.Errorf("person %s: %s fired %d times (contact records %d)", e.Person, e.Action, e.N, e.Lineage)
		}
	}
	var dupStable int64
	s.store.DB().Raw(`SELECT count(*) FROM (SELECT stable_id FROM outbox GROUP BY workspace_id, stable_id HAVING count(*) > 1) x`).Scan(&dupStable)
	if dupStable != 0 {
		t.Errorf("%d stable ids appear twice in the outbox", dupStable)
	}
	t.Logf("side effects: %v", totals)
}
