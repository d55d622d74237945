package lifecycle

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// contractBody is CONTRACT.md's PUT /api/v1/workspaces/{ws}/stages example.
const contractBody = `{"stages":["Discovered","Engaged","SQL","Closed"],"allow_regression":false,"on_state_conflict":"dead_letter"}`

// fullRules exercises every field.
const fullRules = `{
  "version": 3,
  "stages": ["New", "Contacted", "Qualified", "Won"],
  "terminal": ["Lost", "Spam"],
  "aliases": {"SQL_VOICE_QUALIFIED": "Qualified", "mql": "contacted"},
  "event_stages": {"form_submitted": "New", "call_connected": "SQL_VOICE_QUALIFIED"},
  "allow_regression": true,
  "allowed_backward": [{"from": "Lost", "to": "Contacted"}],
  "allow_skip": false,
  "required_fields": {"Qualified": ["budget"]},
  "on_missing_field": "dead_letter",
  "missing_field_tag": "incomplete",
  "require_phone_verification": ["Qualified"],
  "on_state_conflict": "apply_fields_keep_stage",
  "on_late_event": "dead_letter",
  "requires_existing_contact": ["payment_succeeded"],
  "source_precedence": ["hubspot", "vapi"],
  "score": {"event_points": {"form_submitted": 5},
            "field_points": [{"field": "employees", "op": "gte", "value": "50", "points": 10},
                             {"field": "industry", "op": "in", "values": ["saas"], "points": 5}]},
  "side_effects": [{"on": "created", "action": "start_onboarding"},
                   {"on": "enter:Qualified", "action": "sales_task", "params": {"queue": "ae"}}]
}`

func TestParseRulesContractBodyTakesDefaults(t *testing.T) {
	t.Parallel()
	got, err := ParseRules([]byte(contractBody))
	if err != nil {
		t.Fatalf("ParseRules(contract body): %v", err)
	}
	if want := DefaultRules(); !reflect.DeepEqual(got, want) {
		t.Errorf("ParseRules(contract body) =\n %+v\nwant DefaultRules()\n %+v", got, want)
	}
	if !got.AllowSkip || got.OnLateEvent != PolicyApplyFieldsKeepStage || got.MissingFieldTag != "needs-data" ||
		!reflect.DeepEqual(got.Terminal, []string{"Lost"}) {
		t.Errorf("defaults not applied: %+v", got)
	}
}

func TestParseRulesExplicitValuesWin(t *testing.T) {
	t.Parallel()
	got, err := ParseRules([]byte(`{"stages":["A","B"],"terminal":[],"allow_skip":false,"allow_regression":true}`))
	if err != nil {
		t.Fatalf("ParseRules: %v", err)
	}
	if len(got.Terminal) != 0 || got.AllowSkip || !got.AllowRegression || got.OnStateConflict != PolicyDeadLetter {
		t.Errorf("ParseRules = %+v; want no terminal, allow_skip=false, allow_regression=true, default on_state_conflict", got)
	}
}

func TestRulesJSONRoundTrip(t *testing.T) {
	t.Parallel()
	first, err := ParseRules([]byte(fullRules))
	if err != nil {
		t.Fatalf("ParseRules(fullRules): %v", err)
	}
	if first.Version != 3 || first.AllowSkip || first.Score.FieldPoints[1].Values[0] != "saas" ||
		first.SideEffects[1].Params["queue"] != "ae" {
		t.Fatalf("ParseRules(fullRules) lost data: %+v", first)
	}
	for _, r := range []Rules{first, DefaultRules(), {Stages: []string{"Only"}}} {
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		var again Rules
		if err := json.Unmarshal(data, &again); err != nil {
			t.Fatalf("Unmarshal(%s): %v", data, err)
		}
		data2, err := json.Marshal(again)
		if err != nil {
			t.Fatalf("Marshal again: %v", err)
		}
		if string(data) != string(data2) {
			t.Errorf("round trip changed the rules:\n %s\n %s", data, data2)
		}
		if len(r.Terminal) == 0 && len(again.Terminal) != 0 {
			t.Errorf("rules without terminal stages came back with %v", again.Terminal)
		}
	}
}

func TestUnmarshalJSONAppliesDefaults(t *testing.T) {
	t.Parallel()
	var holder struct {
		Rules Rules `json:"rules"`
	}
	if err := json.Unmarshal([]byte(`{"rules":{"stages":["A","B"]}}`), &holder); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	if !holder.Rules.AllowSkip || holder.Rules.OnStateConflict != PolicyDeadLetter {
		t.Errorf("decoded rules lack defaults: %+v", holder.Rules)
	}
}

func TestParseRulesErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, field, msg string
	}{
		{"NotAnObject", `[1]`, "", "must be a JSON object"},
		{"Empty", ``, "", "must be a JSON object"},
		{"Null", `null`, "", "must be a JSON object"},
		{"Truncated", `{"stages":["A"]`, "", "invalid JSON"},
		{"Syntax", `{"stages":[A]}`, "", "invalid JSON"},
		{"TrailingData", `{"stages":["A"]} {}`, "", "unexpected data"},
		{"UnknownField", `{"stagez":["A"]}`, "stagez", "unknown field"},
		{"UnknownNestedField", `{"score":{"event_pointz":{}}}`, "event_pointz", "unknown field"},
		{"WrongType", `{"stages":"SQL"}`, "stages", "must be []string"},
		{"WrongBoolType", `{"allow_regression":"yes"}`, "allow_regression", "must be"},
		{"NegativeVersion", `{"version":-1}`, "version", "negative"},
		{"NoStages", `{"stages":[]}`, "stages", "at least one stage"},
		{"EmptyStage", `{"stages":["A",""]}`, "stages[1]", "must not be empty"},
		{"PaddedStage", `{"stages":["A"," B"]}`, "stages[1]", "leading or trailing spaces"},
		{"ControlCharInStage", `{"stages":["A","B\u0007"]}`, "stages[1]", "control characters"},
		{"DuplicateStageIgnoringCase", `{"stages":["Lead","lead"]}`, "stages[1]", `duplicates stages[0]`},
		{"TerminalDuplicatesStage", `{"terminal":["sql"]}`, "terminal[0]", "duplicates stages[2]"},
		{"AliasToUnknownStage", `{"aliases":{"X":"Nope"}}`, "aliases.X", `unknown stage "Nope"`},
		{"AliasCaseClash", `{"aliases":{"x":"SQL","X":"SQL"}}`, "aliases.x", "case-insensitive"},
		{"AliasShadowsOtherStage", `{"aliases":{"sql":"Engaged"}}`, "aliases.sql", `is the name of stage "SQL"`},
		{"EventStageUnknown", `{"event_stages":{"form":"Nope"}}`, "event_stages.form", "unknown stage"},
		{"EventStageEmptyType", `{"event_stages":{"":"SQL"}}`, "event_stages.", "must not be empty"},
		{"BackwardUnknownFrom", `{"allowed_backward":[{"from":"Gone","to":"Engaged"}]}`, "allowed_backward[0].from", "unknown stage"},
		{"BackwardUnknownTo", `{"allowed_backward":[{"from":"Lost","to":"Nope"}]}`, "allowed_backward[0].to", "unknown stage"},
		{"BackwardIsForward", `{"allowed_backward":[{"from":"Engaged","to":"SQL"}]}`, "allowed_backward[0]", "not a backward move"},
		{"BackwardIntoTerminal", `{"allowed_backward":[{"from":"SQL","to":"Lost"}]}`, "allowed_backward[0]", "not a backward move"},
		{"BackwardToSelf", `{"allowed_backward":[{"from":"SQL","to":"sql"}]}`, "allowed_backward[0]", "not a move"},
		{"RequiredFieldsUnknownStage", `{"required_fields":{"Nope":["a"]}}`, "required_fields.Nope", "unknown stage"},
		{"RequiredFieldEmpty", `{"required_fields":{"SQL":["budget",""]}}`, "required_fields.SQL[1]", "must not be empty"},
		{"OnMissingField", `{"on_missing_field":"ignore"}`, "on_missing_field", "not one of tag, dead_letter"},
		{"MissingFieldTag", `{"missing_field_tag":" x"}`, "missing_field_tag", "spaces"},
		{"OnStateConflict", `{"on_state_conflict":"explode"}`, "on_state_conflict", "not one of dead_letter, drop"},
		{"OnLateEventDrop", `{"on_late_event":"drop"}`, "on_late_event", "not one of apply_fields_keep_stage, dead_letter"},
		{"PhoneStageUnknown", `{"require_phone_verification":["Nope"]}`, "require_phone_verification[0]", "unknown stage"},
		{"RequiresContactEmpty", `{"requires_existing_contact":[""]}`, "requires_existing_contact[0]", "must not be empty"},
		{"SourcePrecedenceDuplicate", `{"source_precedence":["crm","CRM"]}`, "source_precedence[1]", "listed twice"},
		{"ScoreEventEmpty", `{"score":{"event_points":{"":1}}}`, "score.event_points.", "must not be empty"},
		{"ScoreFieldEmpty", `{"score":{"field_points":[{"op":"present"}]}}`, "score.field_points[0].field", "must not be empty"},
		{"ScoreOp", `{"score":{"field_points":[{"field":"x","op":"like"}]}}`, "score.field_points[0].op", "not one of eq, in"},
		{"ScoreGteNotNumber", `{"score":{"field_points":[{"field":"x","op":"gte","value":"many"}]}}`, "score.field_points[0].value", "needs a number"},
		{"ScoreLteNaN", `{"score":{"field_points":[{"field":"x","op":"lte","value":"NaN"}]}}`, "score.field_points[0].value", "needs a number"},
		{"ScoreInNoValues", `{"score":{"field_points":[{"field":"x","op":"in"}]}}`, "score.field_points[0].values", "at least one value"},
		{"ScoreEqNoValue", `{"score":{"field_points":[{"field":"x","op":"eq"}]}}`, "score.field_points[0].value", "needs a value"},
		{"SideEffectUnknownStage", `{"side_effects":[{"on":"enter:Nope","action":"x"}]}`, "side_effects[0].on", `unknown stage "Nope"`},
		{"SideEffectBadCause", `{"side_effects":[{"on":"updated","action":"x"}]}`, "side_effects[0].on", "neither"},
		{"SideEffectNoAction", `{"side_effects":[{"on":"created","action":""}]}`, "side_effects[0].action", "must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseRules([]byte(tt.body))
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("ParseRules(%s) error = %v, want *ValidationError", tt.body, err)
			}
			if ve.Field != tt.field || !strings.Contains(ve.Message, tt.msg) {
				t.Errorf("ParseRules(%s) = {Field: %q, Message: %q}, want field %q and message containing %q",
					tt.body, ve.Field, ve.Message, tt.field, tt.msg)
			}
		})
	}
}

func TestValidateAcceptsGoBuiltRulesWithEmptyPolicies(t *testing.T) {
	t.Parallel()
	r := Rules{Stages: []string{"A", "B"}}
	if err := r.Validate(); err != nil {
		t.Errorf("Validate(minimal rules) = %v, want nil", err)
	}
}

func TestCanonicalAndRank(t *testing.T) {
	t.Parallel()
	r := testRules(nil)
	tests := []struct {
		name      string
		canonical string
		ok        bool
		rank      int
	}{
		{"Discovered", "Discovered", true, 0},
		{"sql", "SQL", true, 2},
		{"sql_voice_qualified", "SQL", true, 2},
		{"CLOSED", "Closed", true, 3},
		{"lost", "Lost", true, 4},
		{"Qualified", "", false, -1},
		{"", "", false, -1},
	}
	for _, tt := range tests {
		got, ok := r.Canonical(tt.name)
		if got != tt.canonical || ok != tt.ok {
			t.Errorf("Canonical(%q) = %q, %v; want %q, %v", tt.name, got, ok, tt.canonical, tt.ok)
		}
		if rank := r.Rank(tt.name); rank != tt.rank {
			t.Errorf("Rank(%q) = %d, want %d", tt.name, rank, tt.rank)
		}
	}
	if !r.IsTerminal("LOST") || r.IsTerminal("Closed") {
		t.Errorf("IsTerminal: Lost must be terminal, Closed must not")
	}
}
