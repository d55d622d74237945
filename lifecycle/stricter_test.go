package lifecycle

import (
	"reflect"
	"testing"
)

func TestStricter(t *testing.T) {
	t.Parallel()
	permissive := testRules(func(r *Rules) {
		r.AllowRegression = true
		r.OnStateConflict = PolicyApplyFieldsKeepStage
		r.AllowedBackward = []Move{{From: "Lost", To: "Engaged"}, {From: "SQL", To: "Engaged"}}
		r.RequiredFields = map[string][]string{"SQL": {"budget"}}
	})
	strict := testRules(func(r *Rules) { r.OnLateEvent = PolicyDeadLetter; r.OnMissingField = PolicyDeadLetter })
	tests := []struct {
		name     string
		base     Rules
		override string
		edit     func(*Rules) // the expected change to base; nil = none
	}{
		{"EmptyOverrideChangesNothing", permissive, `{}`, nil},
		{"RegressionTightened", permissive, `{"allow_regression":false}`,
			func(r *Rules) { r.AllowRegression = false }},
		{"RegressionNotLoosened", strict, `{"allow_regression":true}`, nil},
		{"SkipTightened", permissive, `{"allow_skip":false}`, func(r *Rules) { r.AllowSkip = false }},
		{"StateConflictToDeadLetter", permissive, `{"on_state_conflict":"dead_letter"}`,
			func(r *Rules) { r.OnStateConflict = PolicyDeadLetter }},
		{"StateConflictToDrop", permissive, `{"on_state_conflict":"drop"}`,
			func(r *Rules) { r.OnStateConflict = PolicyDrop }},
		{"StateConflictNotLoosenedToDrop", strict, `{"on_state_conflict":"drop"}`, nil},
		{"LateEventTightened", permissive, `{"on_late_event":"dead_letter"}`,
			func(r *Rules) { r.OnLateEvent = PolicyDeadLetter }},
		{"LateEventNotLoosened", strict, `{"on_late_event":"apply_fields_keep_stage"}`, nil},
		{"MissingFieldTightened", permissive, `{"on_missing_field":"dead_letter"}`,
			func(r *Rules) { r.OnMissingField = PolicyDeadLetter }},
		{"MissingFieldRejectsForeignPolicy", permissive, `{"on_missing_field":"drop"}`, nil},
		{"MissingFieldNotLoosened", strict, `{"on_missing_field":"tag"}`, nil},
		{"BackwardMovesIntersected", permissive, `{"allowed_backward":[{"from":"lost","to":"ENGAGED"},{"from":"Closed","to":"Discovered"}]}`,
			func(r *Rules) { r.AllowedBackward = []Move{{From: "Lost", To: "Engaged"}} }},
		{"BackwardMovesAllRemoved", permissive, `{"allowed_backward":[]}`,
			func(r *Rules) { r.AllowedBackward = []Move{} }},
		{"RequiredFieldsAdded", permissive, `{"required_fields":{"sql_voice_qualified":["budget","authority"],"Closed":["amount"],"Nope":["x"]}}`,
			func(r *Rules) {
				r.RequiredFields = map[string][]string{"SQL": {"budget", "authority"}, "Closed": {"amount"}}
			}},
		{"PhoneVerificationAdded", permissive, `{"require_phone_verification":["sql","Nope"]}`,
			func(r *Rules) { r.RequirePhoneVerification = []string{"SQL"} }},
		{"RequiresContactAdded", permissive, `{"requires_existing_contact":["payment_succeeded"]}`,
			func(r *Rules) { r.RequiresContact = []string{"payment_succeeded"} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o, err := ParseOverride([]byte(tt.override))
			if err != nil {
				t.Fatalf("ParseOverride(%s): %v", tt.override, err)
			}
			before := deepCopyRules(t, tt.base)
			got := tt.base.Stricter(o)
			want := deepCopyRules(t, tt.base)
			if tt.edit != nil {
				tt.edit(&want)
			}
			if !reflect.DeepEqual(normalized(got), normalized(want)) {
				t.Errorf("Stricter(%s) =\n %+v\nwant\n %+v", tt.override, got, want)
			}
			if normalized(tt.base) != normalized(before) {
				t.Errorf("Stricter modified its receiver")
			}
			if err := got.Validate(); err != nil {
				t.Errorf("Stricter result does not validate: %v", err)
			}
		})
	}
}

func TestStricterIgnoresStructuralFields(t *testing.T) {
	t.Parallel()
	base := testRules(nil)
	override := Rules{Stages: []string{"X"}, Terminal: []string{}, Aliases: map[string]string{"x": "X"},
		AllowRegression: true, AllowSkip: true, Version: 99}
	got := base.Stricter(override)
	if !reflect.DeepEqual(got.Stages, base.Stages) || !reflect.DeepEqual(got.Terminal, base.Terminal) ||
		!reflect.DeepEqual(got.Aliases, base.Aliases) || got.Version != base.Version {
		t.Errorf("Stricter changed structural fields: %+v", got)
	}
}

func TestParseOverrideRejectsUnknownFields(t *testing.T) {
	t.Parallel()
	if _, err := ParseOverride([]byte(`{"allow_everything":true}`)); err == nil {
		t.Errorf("ParseOverride accepted an unknown field")
	}
}

func deepCopyRules(t *testing.T, r Rules) Rules {
	t.Helper()
	data, err := r.MarshalJSON()
	if err != nil {
		t.Fatalf("marshal rules: %v", err)
	}
	var c Rules
	if err := c.UnmarshalJSON(data); err != nil {
		t.Fatalf("unmarshal rules: %v", err)
	}
	return c
}

// normalized maps nil and empty collections to one form for comparison.
func normalized(r Rules) string {
	data, _ := r.MarshalJSON()
	return string(data)
}
