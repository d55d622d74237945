package lifecycle

import (
	"reflect"
	"testing"
)

func testScore() ScoreRules {
	return ScoreRules{
		EventPoints: map[string]int{"form_submitted": 5, "call_connected": 10, "email_opened": 0},
		FieldPoints: []FieldCondition{
			{Field: "employees", Op: OpGte, Value: "50", Points: 20},
			{Field: "employees", Op: OpLte, Value: "10", Points: -5},
			{Field: "industry", Op: OpIn, Values: []string{"saas", "fintech"}, Points: 10},
			{Field: "country", Op: OpEq, Value: "US", Points: 3},
			{Field: "phone", Op: OpPresent, Points: 2},
		},
	}
}

func TestScoreCompute(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		events []string
		fields map[string]string
		total  int
		lines  []ScoreLine
	}{
		{
			name:   "BehaviourAndFit",
			events: []string{"form_submitted", "call_connected", "email_opened", "unscored"},
			fields: map[string]string{"employees": "1,200", "industry": "SaaS", "country": " us ", "phone": "+14155550134"},
			total:  5 + 10 + 20 + 10 + 3 + 2,
			lines: []ScoreLine{
				{Kind: "event", Key: "call_connected", Points: 10},
				{Kind: "event", Key: "form_submitted", Points: 5},
				{Kind: "field", Key: "employees gte 50", Points: 20},
				{Kind: "field", Key: "industry in [saas, fintech]", Points: 10},
				{Kind: "field", Key: "country eq US", Points: 3},
				{Kind: "field", Key: "phone present", Points: 2},
			},
		},
		{
			name:   "NegativeFit",
			events: nil,
			fields: map[string]string{"employees": "8"},
			total:  -5,
			lines:  []ScoreLine{{Kind: "field", Key: "employees lte 10", Points: -5}},
		},
		{
			name:   "NonNumericAndBlankValuesScoreNothing",
			events: []string{},
			fields: map[string]string{"employees": "lots", "phone": "  ", "industry": ""},
			total:  0,
			lines:  nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			total, lines := testScore().Compute(tt.events, tt.fields)
			if total != tt.total || !reflect.DeepEqual(lines, tt.lines) {
				t.Errorf("Compute() = %d, %+v; want %d, %+v", total, lines, tt.total, tt.lines)
			}
		})
	}
}

func TestScoreIsIdempotent(t *testing.T) {
	t.Parallel()
	s := testScore()
	fields := map[string]string{"employees": "60", "industry": "fintech"}
	once, onceLines := s.Compute([]string{"form_submitted", "call_connected"}, fields)
	// A repeated delivery, a second event of the same type, a different
	// order and a repeated enrichment (same field values) add nothing.
	again, againLines := s.Compute([]string{"call_connected", "form_submitted", "FORM_SUBMITTED", "form_submitted"}, fields)
	if once != again || !reflect.DeepEqual(onceLines, againLines) {
		t.Errorf("repeat changed the score: %d %+v vs %d %+v", once, onceLines, again, againLines)
	}
	if once != 5+10+20+10 {
		t.Errorf("score = %d, want 45", once)
	}
}
