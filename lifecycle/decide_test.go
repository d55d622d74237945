package lifecycle

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

var (
	t0900 = time.Date(2026, 10, 31, 9, 0, 0, 0, time.UTC)
	t0959 = time.Date(2026, 10, 31, 9, 59, 0, 0, time.UTC)
	t1000 = time.Date(2026, 10, 31, 10, 0, 0, 0, time.UTC)
	t1002 = time.Date(2026, 10, 31, 10, 2, 0, 0, time.UTC)
)

// testRules is DefaultRules with the edits a case needs.
func testRules(edit func(*Rules)) Rules {
	r := DefaultRules()
	r.Version = 7
	r.Aliases = map[string]string{"SQL_VOICE_QUALIFIED": "SQL"}
	r.EventStages = map[string]string{"form_submitted": "Discovered", "call_connected": "Engaged"}
	if edit != nil {
		edit(&r)
	}
	return r
}

func in(stage string, enteredAt time.Time) Contact {
	return Contact{Exists: true, Stage: stage, StageEnteredAt: enteredAt, Fields: map[string]string{}}
}

func propose(target string, at time.Time) Proposal {
	return Proposal{EventType: "crm_stage_changed", TargetStage: target, OccurredAt: at}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		rules   Rules
		contact Contact
		prop    Proposal
		want    Decision // compared in full except Reason
		reason  string   // substring Reason must contain
	}{
		{
			name: "ForwardOneStep", rules: testRules(nil),
			contact: in("Discovered", t0900), prop: propose("Engaged", t1000),
			want:   Decision{Outcome: Applied, NewStage: "Engaged", EnteredAt: t1000, Stage: Forward, ApplyFields: true},
			reason: "forward Discovered -> Engaged",
		},
		{
			name: "ForwardSkipAllowedByDefault", rules: testRules(nil),
			contact: in("Discovered", t0900), prop: propose("SQL", t1000),
			want: Decision{Outcome: Applied, NewStage: "SQL", EnteredAt: t1000, Stage: Forward, ApplyFields: true},
		},
		{
			name: "ForwardDespiteOlderTimestamp", rules: testRules(nil),
			contact: in("Engaged", t1000), prop: propose("SQL", t0900),
			want: Decision{Outcome: Applied, NewStage: "SQL", EnteredAt: t0900, Stage: Forward, ApplyFields: true},
		},
		{
			name:    "SkipDisallowedIsAStateConflict",
			rules:   testRules(func(r *Rules) { r.AllowSkip = false }),
			contact: in("Discovered", t0900), prop: propose("SQL", t1000),
			want:   Decision{Outcome: Quarantined, Stage: SkipDisallowed, DeadLetterKind: KindSkipNotAllowed},
			reason: "skips Engaged; allow_skip=false; on_state_conflict=dead_letter",
		},
		{
			name:    "SkipDisallowedStillAllowsOneStep",
			rules:   testRules(func(r *Rules) { r.AllowSkip = false }),
			contact: in("Discovered", t0900), prop: propose("Engaged", t1000),
			want: Decision{Outcome: Applied, NewStage: "Engaged", EnteredAt: t1000, Stage: Forward, ApplyFields: true},
		},
		{
			name:    "SkipDisallowedNewContactMustStartAtFirstStage",
			rules:   testRules(func(r *Rules) { r.AllowSkip = false }),
			contact: Contact{}, prop: propose("Engaged", t1000),
			want:   Decision{Outcome: Quarantined, Stage: SkipDisallowed, DeadLetterKind: KindSkipNotAllowed},
			reason: "skips Discovered",
		},
		{
			name:    "SkipDisallowedStillAllowsTerminal",
			rules:   testRules(func(r *Rules) { r.AllowSkip = false }),
			contact: in("Discovered", t0900), prop: propose("Lost", t1000),
			want: Decision{Outcome: Applied, NewStage: "Lost", EnteredAt: t1000, Stage: Forward, ApplyFields: true},
		},
		{
			name: "SameStageIsFieldsOnly", rules: testRules(nil),
			contact: in("SQL", t1000), prop: propose("sql", t1002),
			want:   Decision{Outcome: Unchanged, Stage: Same, ApplyFields: true},
			reason: "already in SQL",
		},
		{
			name: "LateArrivalKeepsStageAppliesFields", rules: testRules(nil),
			contact: in("SQL", t1000), prop: propose("Engaged", t0959),
			want:   Decision{Outcome: Unchanged, Stage: Late, ApplyFields: true},
			reason: "late event: proposes Engaged below SQL, but happened at 2026-10-31T09:59:00Z, not after the contact entered SQL at 2026-10-31T10:00:00Z",
		},
		{
			name: "SameInstantIsLateNotRegression", rules: testRules(nil),
			contact: in("SQL", t1000), prop: propose("Engaged", t1000),
			want: Decision{Outcome: Unchanged, Stage: Late, ApplyFields: true},
		},
		{
			name:    "LateArrivalDeadLettered",
			rules:   testRules(func(r *Rules) { r.OnLateEvent = PolicyDeadLetter }),
			contact: in("SQL", t1000), prop: propose("Engaged", t0959),
			want:   Decision{Outcome: Quarantined, Stage: Late, DeadLetterKind: KindLateEvent},
			reason: "on_late_event=dead_letter",
		},
		{
			name: "RegressionDeadLetteredByDefault", rules: testRules(nil),
			contact: in("SQL", t1000), prop: propose("Engaged", t1002),
			want:   Decision{Outcome: Quarantined, Stage: Regression, DeadLetterKind: KindStateConflict},
			reason: "regression SQL -> Engaged (event at 2026-10-31T10:02:00Z is newer than entry into SQL at 2026-10-31T10:00:00Z; target_stage \"Engaged\"); on_state_conflict=dead_letter",
		},
		{
			name:    "RegressionDropped",
			rules:   testRules(func(r *Rules) { r.OnStateConflict = PolicyDrop }),
			contact: in("SQL", t1000), prop: propose("Engaged", t1002),
			want:   Decision{Outcome: Dropped, Stage: Regression},
			reason: "on_state_conflict=drop",
		},
		{
			name:    "RegressionAppliesFieldsKeepsStage",
			rules:   testRules(func(r *Rules) { r.OnStateConflict = PolicyApplyFieldsKeepStage }),
			contact: in("SQL", t1000), prop: propose("Engaged", t1002),
			want:   Decision{Outcome: Unchanged, Stage: Regression, ApplyFields: true},
			reason: "on_state_conflict=apply_fields_keep_stage",
		},
		{
			name:    "RegressionAllowed",
			rules:   testRules(func(r *Rules) { r.AllowRegression = true }),
			contact: in("SQL", t1000), prop: propose("Engaged", t1002),
			want:   Decision{Outcome: Applied, NewStage: "Engaged", EnteredAt: t1002, Stage: Regression, ApplyFields: true},
			reason: "allow_regression=true",
		},
		{
			name:    "AllowRegressionDoesNotApplyLateEvents",
			rules:   testRules(func(r *Rules) { r.AllowRegression = true }),
			contact: in("SQL", t1000), prop: propose("Engaged", t0959),
			want: Decision{Outcome: Unchanged, Stage: Late, ApplyFields: true},
		},
		{
			name:    "AllowedBackwardRecyclesLostLead",
			rules:   testRules(func(r *Rules) { r.AllowedBackward = []Move{{From: "lost", To: "engaged"}} }),
			contact: in("Lost", t1000), prop: propose("Engaged", t1002),
			want:   Decision{Outcome: Applied, NewStage: "Engaged", EnteredAt: t1002, Stage: AllowedBackward, ApplyFields: true},
			reason: "allowed backward move Lost -> Engaged",
		},
		{
			name:    "AllowedBackwardIgnoresLateEvents",
			rules:   testRules(func(r *Rules) { r.AllowedBackward = []Move{{From: "Lost", To: "Engaged"}} }),
			contact: in("Lost", t1000), prop: propose("Engaged", t0959),
			want: Decision{Outcome: Unchanged, Stage: Late, ApplyFields: true},
		},
		{
			name:    "AllowedBackwardIsMoveSpecific",
			rules:   testRules(func(r *Rules) { r.AllowedBackward = []Move{{From: "Lost", To: "Engaged"}} }),
			contact: in("SQL", t1000), prop: propose("Engaged", t1002),
			want: Decision{Outcome: Quarantined, Stage: Regression, DeadLetterKind: KindStateConflict},
		},
		{
			name: "TerminalReachableFromAnyStageAtAnyTime", rules: testRules(nil),
			contact: in("SQL", t1000), prop: propose("Lost", t0900),
			want: Decision{Outcome: Applied, NewStage: "Lost", EnteredAt: t0900, Stage: Forward, ApplyFields: true},
		},
		{
			name:    "TerminalNotLeftEvenWithAllowRegression",
			rules:   testRules(func(r *Rules) { r.AllowRegression = true }),
			contact: in("Lost", t1000), prop: propose("Closed", t1002),
			want:   Decision{Outcome: Quarantined, Stage: Regression, DeadLetterKind: KindStateConflict},
			reason: "terminal stage Lost is left only through allowed_backward",
		},
		{
			name: "LateEventOnTerminalContact", rules: testRules(nil),
			contact: in("Lost", t1000), prop: propose("SQL", t0900),
			want: Decision{Outcome: Unchanged, Stage: Late, ApplyFields: true},
		},
		{
			name: "AliasResolvesCaseInsensitively", rules: testRules(nil),
			contact: in("Engaged", t0900), prop: propose("sql_voice_qualified", t1000),
			want:   Decision{Outcome: Applied, NewStage: "SQL", EnteredAt: t1000, Stage: Forward, ApplyFields: true},
			reason: `target_stage "sql_voice_qualified"`,
		},
		{
			name: "WorkspaceEventStage", rules: testRules(nil),
			contact: in("Discovered", t0900), prop: Proposal{EventType: "Call_Connected", OccurredAt: t1000},
			want:   Decision{Outcome: Applied, NewStage: "Engaged", EnteredAt: t1000, Stage: Forward, ApplyFields: true},
			reason: "event_stages: Call_Connected -> Engaged",
		},
		{
			name: "SourceEventStageWinsOverWorkspace", rules: testRules(nil),
			contact: in("Discovered", t0900),
			prop: Proposal{EventType: "call_connected", OccurredAt: t1000,
				SourceEventStages: map[string]string{"call_connected": "SQL_VOICE_QUALIFIED"}},
			want:   Decision{Outcome: Applied, NewStage: "SQL", EnteredAt: t1000, Stage: Forward, ApplyFields: true},
			reason: "the source's event_stages",
		},
		{
			name: "ExplicitTargetWinsOverMappings", rules: testRules(nil),
			contact: in("Discovered", t0900),
			prop: Proposal{EventType: "call_connected", TargetStage: "Closed", OccurredAt: t1000,
				SourceEventStages: map[string]string{"call_connected": "SQL"}},
			want: Decision{Outcome: Applied, NewStage: "Closed", EnteredAt: t1000, Stage: Forward, ApplyFields: true},
		},
		{
			name: "UnknownTargetIsQuarantined", rules: testRules(nil),
			contact: in("Engaged", t0900), prop: propose("Qualified", t1000),
			want:   Decision{Outcome: Quarantined, Stage: Invalid, DeadLetterKind: KindUnknownStage},
			reason: `target_stage "Qualified" is neither a stage nor an alias`,
		},
		{
			name: "SourceMappingToUnknownStageIsQuarantined", rules: testRules(nil),
			contact: in("Engaged", t0900),
			prop: Proposal{EventType: "demo_booked", OccurredAt: t1000,
				SourceEventStages: map[string]string{"demo_booked": "Demo"}},
			want: Decision{Outcome: Quarantined, Stage: Invalid, DeadLetterKind: KindUnknownStage},
		},
		{
			name: "NoTargetIsFieldsOnly", rules: testRules(nil),
			contact: in("SQL", t1000), prop: Proposal{EventType: "email_opened", OccurredAt: t1002},
			want:   Decision{Outcome: Unchanged, Stage: None, ApplyFields: true},
			reason: "fields only",
		},
		{
			name: "NoTargetNewContactEntersFirstStage", rules: testRules(nil),
			contact: Contact{}, prop: Proposal{EventType: "email_opened", OccurredAt: t1002},
			want: Decision{Outcome: Applied, NewStage: "Discovered", EnteredAt: t1002, Stage: Forward, ApplyFields: true},
		},
		{
			name: "StageUnknownToRulesCountsAsNoStage", rules: testRules(nil),
			contact: in("MQL", t1000), prop: propose("Engaged", t0900),
			want: Decision{Outcome: Applied, NewStage: "Engaged", EnteredAt: t0900, Stage: Forward, ApplyFields: true},
		},
		{
			name:    "MissingRequiredFieldTagged",
			rules:   testRules(func(r *Rules) { r.RequiredFields = map[string][]string{"sql": {"budget", "company"}} }),
			contact: in("Engaged", t0900), prop: propose("SQL", t1000),
			want: Decision{Outcome: Applied, NewStage: "SQL", EnteredAt: t1000, Stage: Forward, ApplyFields: true,
				Tags: []string{"needs-data"}},
			reason: "SQL requires budget, company, missing; tagged needs-data",
		},
		{
			name: "MissingRequiredFieldCustomTag",
			rules: testRules(func(r *Rules) {
				r.RequiredFields = map[string][]string{"SQL": {"budget"}}
				r.MissingFieldTag = "incomplete"
			}),
			contact: in("Engaged", t0900), prop: propose("SQL", t1000),
			want: Decision{Outcome: Applied, NewStage: "SQL", EnteredAt: t1000, Stage: Forward, ApplyFields: true,
				Tags: []string{"incomplete"}},
		},
		{
			name:  "RequiredFieldsFromContactAndEvent",
			rules: testRules(func(r *Rules) { r.RequiredFields = map[string][]string{"SQL": {"budget", "company"}} }),
			contact: Contact{Exists: true, Stage: "Engaged", StageEnteredAt: t0900,
				Fields: map[string]string{"company": "Acme", "budget": " "}},
			prop: Proposal{TargetStage: "SQL", OccurredAt: t1000, Fields: map[string]string{"budget": "10k"}},
			want: Decision{Outcome: Applied, NewStage: "SQL", EnteredAt: t1000, Stage: Forward, ApplyFields: true},
		},
		{
			name: "MissingRequiredFieldDeadLettered",
			rules: testRules(func(r *Rules) {
				r.RequiredFields = map[string][]string{"SQL": {"budget"}}
				r.OnMissingField = PolicyDeadLetter
			}),
			contact: in("Engaged", t0900), prop: propose("SQL", t1000),
			want:   Decision{Outcome: Quarantined, Stage: Forward, DeadLetterKind: KindMissingField},
			reason: "SQL requires budget, missing; on_missing_field=dead_letter",
		},
		{
			name:    "RequiredFieldsOfOtherStagesIgnored",
			rules:   testRules(func(r *Rules) { r.RequiredFields = map[string][]string{"Closed": {"amount"}} }),
			contact: in("Engaged", t0900), prop: propose("SQL", t1000),
			want: Decision{Outcome: Applied, NewStage: "SQL", EnteredAt: t1000, Stage: Forward, ApplyFields: true},
		},
		{
			name:    "UnverifiedPhoneQuarantined",
			rules:   testRules(func(r *Rules) { r.RequirePhoneVerification = []string{"SQL_VOICE_QUALIFIED"} }),
			contact: in("Engaged", t0900), prop: propose("SQL", t1000),
			want:   Decision{Outcome: Quarantined, Stage: Forward, DeadLetterKind: KindPhoneUnverified},
			reason: "SQL requires a verified phone",
		},
		{
			name:    "PhoneVerifiedByVerifyingSource",
			rules:   testRules(func(r *Rules) { r.RequirePhoneVerification = []string{"SQL"} }),
			contact: in("Engaged", t0900),
			prop:    Proposal{TargetStage: "SQL", OccurredAt: t1000, PhoneVerified: true},
			want:    Decision{Outcome: Applied, NewStage: "SQL", EnteredAt: t1000, Stage: Forward, ApplyFields: true},
		},
		{
			name:    "PhoneVerifiedByExplicitField",
			rules:   testRules(func(r *Rules) { r.RequirePhoneVerification = []string{"SQL"} }),
			contact: in("Engaged", t0900),
			prop:    Proposal{TargetStage: "SQL", OccurredAt: t1000, Fields: map[string]string{"phone_verified": "TRUE"}},
			want:    Decision{Outcome: Applied, NewStage: "SQL", EnteredAt: t1000, Stage: Forward, ApplyFields: true},
		},
		{
			name:    "PhoneVerifiedEarlierOnContact",
			rules:   testRules(func(r *Rules) { r.RequirePhoneVerification = []string{"SQL"} }),
			contact: Contact{Exists: true, Stage: "Engaged", StageEnteredAt: t0900, PhoneVerified: true},
			prop:    propose("SQL", t1000),
			want:    Decision{Outcome: Applied, NewStage: "SQL", EnteredAt: t1000, Stage: Forward, ApplyFields: true},
		},
		{
			name:    "RequiresContactWaits",
			rules:   testRules(func(r *Rules) { r.RequiresContact = []string{"payment_succeeded"} }),
			contact: Contact{}, prop: Proposal{EventType: "Payment_Succeeded", TargetStage: "Closed", OccurredAt: t1000},
			want:   Decision{Outcome: Wait, Stage: None, DeadLetterKind: KindMissingContact},
			reason: "Payment_Succeeded requires an existing contact",
		},
		{
			name:    "RequiresContactProceedsOnceItExists",
			rules:   testRules(func(r *Rules) { r.RequiresContact = []string{"payment_succeeded"} }),
			contact: in("SQL", t0900), prop: Proposal{EventType: "payment_succeeded", TargetStage: "Closed", OccurredAt: t1000},
			want: Decision{Outcome: Applied, NewStage: "Closed", EnteredAt: t1000, Stage: Forward, ApplyFields: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.rules.Decide(tt.contact, tt.prop)
			if got.Reason == "" {
				t.Errorf("Reason is empty")
			}
			if !strings.Contains(got.Reason, tt.reason) {
				t.Errorf("Reason = %q, want it to contain %q", got.Reason, tt.reason)
			}
			got.Reason, got.Judged = "", Judged{} // Judged: see TestDecideRecordsWhatItJudged
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Decide() =\n %+v\nwant\n %+v", got, tt.want)
			}
		})
	}
}

func TestDecideIsDeterministic(t *testing.T) {
	t.Parallel()
	r := testRules(func(r *Rules) {
		r.Aliases = map[string]string{"a": "SQL", "A": "Engaged"} // unvalidated: case-clash
		r.RequiredFields = map[string][]string{"SQL": {"x"}, "sql": {"y"}}
	})
	c := in("Discovered", t0900)
	p := Proposal{EventType: "x", TargetStage: "a", OccurredAt: t1000}
	first := r.Decide(c, p)
	for range 50 {
		if got := r.Decide(c, p); !reflect.DeepEqual(got, first) {
			t.Fatalf("Decide() changed between calls: %+v vs %+v", got, first)
		}
	}
}

func TestEventOutcome(t *testing.T) {
	t.Parallel()
	tests := []struct {
		d             Decision
		fieldsChanged bool
		want          Outcome
	}{
		{Decision{Outcome: Unchanged, ApplyFields: true}, true, Applied},
		{Decision{Outcome: Unchanged, ApplyFields: true}, false, Unchanged},
		{Decision{Outcome: Applied, ApplyFields: true}, false, Applied},
		{Decision{Outcome: Quarantined}, true, Quarantined},
		{Decision{Outcome: Dropped}, true, Dropped},
		{Decision{Outcome: Wait}, true, Wait},
	}
	for _, tt := range tests {
		if got := tt.d.EventOutcome(tt.fieldsChanged); got != tt.want {
			t.Errorf("%+v.EventOutcome(%v) = %s, want %s", tt.d, tt.fieldsChanged, got, tt.want)
		}
	}
}

func TestDecideNeverPanicsOnZeroRules(t *testing.T) {
	t.Parallel()
	d := Rules{}.Decide(Contact{}, Proposal{EventType: "x"})
	if d.Outcome != Unchanged || d.Stage != None {
		t.Errorf("Rules{}.Decide() = %+v, want fields-only", d)
	}
}

func BenchmarkDecide(b *testing.B) {
	r := testRules(func(r *Rules) {
		r.RequiredFields = map[string][]string{"SQL": {"budget"}}
		r.AllowedBackward = []Move{{From: "Lost", To: "Engaged"}}
	})
	cases := []struct {
		name string
		c    Contact
		p    Proposal
	}{
		{"Forward", in("Discovered", t0900), Proposal{EventType: "call_connected", OccurredAt: t1000}},
		{"Alias", in("Engaged", t0900), propose("SQL_VOICE_QUALIFIED", t1000)},
		{"Regression", in("SQL", t1000), propose("Engaged", t1002)},
		{"Late", in("SQL", t1000), propose("Engaged", t0900)},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				_ = r.Decide(bc.c, bc.p)
			}
		})
	}
}

func TestDefaultAliasesSpreadAVocabularyOverTheStages(t *testing.T) {
	vocab := []VocabularyTerm{{"subscriber", 0}, {"mql", 1.0 / 3}, {"sql", 2.0 / 3}, {"customer", 1}, {"closed", 0.5}}
	r := DefaultRules()
	got := r.DefaultAliases(vocab)
	want := map[string]string{"subscriber": "Discovered", "mql": "Engaged", "sql": "SQL", "customer": "Closed", "closed": "Closed"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s -> %q, want %q (a term naming a stage keeps it)", k, got[k], v)
		}
	}
	two := Rules{Stages: []string{"Lead", "Customer"}}
	if a := two.DefaultAliases(vocab); a["subscriber"] != "Lead" || a["customer"] != "Customer" || a["mql"] != "Lead" || a["sql"] != "Customer" {
		t.Errorf("two stages: %v", a)
	}
	p := Proposal{SourceVocabulary: vocab, SourceAliases: map[string]string{"SQL": "Engaged"}}
	if s, ok := r.ResolveStage("sql", p); !ok || s != "Engaged" {
		t.Errorf("ResolveStage(sql) with a source alias = %q %v, want Engaged", s, ok)
	}
	if s, ok := r.ResolveStage("nope", p); ok {
		t.Errorf("ResolveStage(nope) = %q, want unknown", s)
	}
}

func TestDecideRecordsWhatItJudged(t *testing.T) {
	t.Parallel()
	t1000 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	noSkip := testRules(func(r *Rules) { r.AllowSkip = false })
	tests := []struct {
		name    string
		rules   Rules
		contact Contact
		prop    Proposal
		want    Judged
	}{
		{"InOrder", noSkip, in("Engaged", t1000.Add(-time.Hour)), propose("SQL", t1000),
			Judged{EventType: "crm_stage_changed", From: "Engaged", To: "SQL", Proposed: "SQL"}},
		{"SkipAllowed", testRules(nil), in("Engaged", t1000.Add(-time.Hour)), propose("Closed", t1000),
			Judged{EventType: "crm_stage_changed", From: "Engaged", To: "Closed", Proposed: "Closed", Skipped: []string{"SQL"}, Rule: "allow_skip"}},
		{"SkipRefused", noSkip, in("Discovered", t1000.Add(-time.Hour)), propose("closed", t1000),
			Judged{EventType: "crm_stage_changed", From: "Discovered", To: "Closed", Proposed: "closed", Skipped: []string{"Engaged", "SQL"}, Rule: "allow_skip", Policy: PolicyDeadLetter}},
		{"Regression", testRules(nil), in("SQL", t1000.Add(-time.Hour)), propose("Engaged", t1000),
			Judged{EventType: "crm_stage_changed", From: "SQL", To: "Engaged", Proposed: "Engaged", Rule: "allow_regression", Policy: PolicyDeadLetter}},
		{"UnknownStage", testRules(nil), in("SQL", t1000.Add(-time.Hour)), propose("Won", t1000),
			Judged{EventType: "crm_stage_changed", From: "SQL", Proposed: "Won", Rule: "stages"}},
		{"Unchanged", testRules(nil), in("SQL", t1000.Add(-time.Hour)), propose("SQL", t1000),
			Judged{EventType: "crm_stage_changed", From: "SQL", To: "SQL", Proposed: "SQL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.rules.Decide(tt.contact, tt.prop).Judged; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Judged =\n %+v\nwant\n %+v", got, tt.want)
			}
		})
	}
}
