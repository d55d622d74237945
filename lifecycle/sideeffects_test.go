package lifecycle

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"testing"
)

func sideEffectRules() Rules {
	return testRules(func(r *Rules) {
		r.SideEffects = []SideEffectRule{
			{On: "created", Action: "start_onboarding"},
			{On: "enter:Engaged", Action: "nurture", Params: map[string]string{"sequence": "warm"}},
			{On: "enter:sql_voice_qualified", Action: "sales_task", Params: map[string]string{"queue": "ae"}},
			{On: "ENTER:sql", Action: "sales_task"}, // same cause and action: one side effect
		}
	})
}

func TestSideEffectsFor(t *testing.T) {
	t.Parallel()
	r := sideEffectRules()
	tests := []struct {
		name    string
		created bool
		stage   string
		want    []SideEffect
	}{
		{"CreatedAndEntered", true, "Engaged", []SideEffect{
			{ID: SideEffectID("c1", "created", "start_onboarding"), Cause: "created", Action: "start_onboarding"},
			{ID: SideEffectID("c1", "enter:Engaged", "nurture"), Cause: "enter:Engaged", Action: "nurture",
				Params: map[string]string{"sequence": "warm"}},
		}},
		{"EnteredByAlias", false, "SQL_VOICE_QUALIFIED", []SideEffect{
			{ID: SideEffectID("c1", "enter:SQL", "sales_task"), Cause: "enter:SQL", Action: "sales_task",
				Params: map[string]string{"queue": "ae"}},
		}},
		{"NothingConfigured", false, "Closed", nil},
		{"NoCause", false, "", nil},
		{"UnknownStage", false, "Nope", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := r.SideEffectsFor("c1", tt.created, tt.stage)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("SideEffectsFor() =\n %+v\nwant\n %+v", got, tt.want)
			}
		})
	}
}

func TestSideEffectIDIsStable(t *testing.T) {
	t.Parallel()
	sum := sha256.Sum256([]byte("c1\x00enter:SQL\x00sales_task"))
	if got, want := SideEffectID("c1", "enter:SQL", "sales_task"), hex.EncodeToString(sum[:]); got != want {
		t.Fatalf("SideEffectID = %s, want %s", got, want)
	}

	r := sideEffectRules()
	first := r.SideEffectsFor("c1", false, "SQL")

	// Re-saving the rules (round trip, new version, reordered rules, edited
	// params, the stage spelled differently) must keep the id.
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	resaved, err := ParseRules(data)
	if err != nil {
		t.Fatalf("ParseRules: %v", err)
	}
	resaved.Version++
	resaved.SideEffects = []SideEffectRule{
		{On: "enter:SQL", Action: "sales_task", Params: map[string]string{"queue": "smb"}},
		{On: "created", Action: "start_onboarding"},
	}
	again := resaved.SideEffectsFor("c1", false, "sql")
	if len(first) != 1 || len(again) != 1 || first[0].ID != again[0].ID {
		t.Fatalf("side effect id changed across re-save: %+v vs %+v", first, again)
	}
	if other := r.SideEffectsFor("c2", false, "SQL"); other[0].ID == first[0].ID {
		t.Errorf("two contacts share side effect id %s", first[0].ID)
	}
	if SideEffectID("c1", "enter:SQL", "nurture") == first[0].ID {
		t.Errorf("two actions share a side effect id")
	}
}

func TestSideEffectParamsAreCopies(t *testing.T) {
	t.Parallel()
	r := sideEffectRules()
	got := r.SideEffectsFor("c1", false, "Engaged")
	got[0].Params["sequence"] = "changed"
	if r.SideEffects[1].Params["sequence"] != "warm" {
		t.Errorf("mutating a side effect's params changed the rules")
	}
}
