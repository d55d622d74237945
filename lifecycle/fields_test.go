package lifecycle

import (
	"maps"
	"reflect"
	"testing"
	"time"
)

func at(minute int) time.Time { return t1000.Add(time.Duration(minute) * time.Minute) }

func TestResolveFields(t *testing.T) {
	t.Parallel()
	rules := testRules(func(r *Rules) { r.SourcePrecedence = []string{"HubSpot", "clearbit"} })
	tests := []struct {
		name string
		obs  []Observation
		want map[string]Resolved
	}{
		{
			name: "HumanCorrectionSurvivesLaterEnrichment",
			obs: []Observation{
				{Field: "company", Value: "Acme", Source: "web_form", ObservedAt: at(0), EventID: "e1"},
				{Field: "company", Value: "Acme Corp", Source: "operator:ann", ObservedAt: at(5), Human: true},
				{Field: "company", Value: "ACME Inc", Source: "hubspot", ObservedAt: at(10), EventID: "e2"},
			},
			want: map[string]Resolved{"company": {Value: "Acme Corp", Source: "operator:ann", ObservedAt: at(5), Human: true}},
		},
		{
			name: "LatestHumanCorrectionWins",
			obs: []Observation{
				{Field: "company", Value: "Acme Corp", Source: "operator:ann", ObservedAt: at(5), Human: true},
				{Field: "company", Value: "Acme Holding", Source: "operator:bob", ObservedAt: at(7), Human: true},
			},
			want: map[string]Resolved{"company": {Value: "Acme Holding", Source: "operator:bob", ObservedAt: at(7), Human: true}},
		},
		{
			name: "HumanDeletionRemovesField",
			obs: []Observation{
				{Field: "company", Value: "Acme", Source: "hubspot", ObservedAt: at(0), EventID: "e1"},
				{Field: "company", Source: "operator:ann", ObservedAt: at(5), Human: true, ExplicitDelete: true},
			},
			want: map[string]Resolved{},
		},
		{
			name: "EmptyValueDoesNotErase",
			obs: []Observation{
				{Field: "first_name", Value: "Jane", Source: "web_form", ObservedAt: at(0), EventID: "e1"},
				{Field: "first_name", Value: "", Source: "web_form", ObservedAt: at(5), EventID: "e2"},
				{Field: "first_name", Value: "  ", Source: "vapi", ObservedAt: at(6), EventID: "e3"},
			},
			want: map[string]Resolved{"first_name": {Value: "Jane", Source: "web_form", ObservedAt: at(0)}},
		},
		{
			name: "ExplicitDeleteErases",
			obs: []Observation{
				{Field: "first_name", Value: "Jane", Source: "web_form", ObservedAt: at(0), EventID: "e1"},
				{Field: "first_name", Source: "web_form", ObservedAt: at(5), EventID: "e2", ExplicitDelete: true},
			},
			want: map[string]Resolved{},
		},
		{
			name: "RetriedObservationGainsNoAuthority",
			obs: []Observation{
				{Field: "phone", Value: "+14155550134", Source: "web_form", ObservedAt: at(0), EventID: "e1"},
				{Field: "phone", Value: "+14155550199", Source: "vapi", ObservedAt: at(5), EventID: "e2"},
				// e1 delivered again later: it must not become the most recent.
				{Field: "phone", Value: "+14155550134", Source: "web_form", ObservedAt: at(9), EventID: "e1"},
			},
			want: map[string]Resolved{"phone": {Value: "+14155550199", Source: "vapi", ObservedAt: at(5)}},
		},
		{
			name: "SourcePrecedenceBeatsRecency",
			obs: []Observation{
				{Field: "industry", Value: "SaaS", Source: "hubspot", ObservedAt: at(0), EventID: "e1"},
				{Field: "industry", Value: "Software", Source: "clearbit", ObservedAt: at(5), EventID: "e2"},
				{Field: "industry", Value: "Tech", Source: "web_form", ObservedAt: at(9), EventID: "e3"},
			},
			want: map[string]Resolved{"industry": {Value: "SaaS", Source: "hubspot", ObservedAt: at(0)}},
		},
		{
			name: "ListedSourceBeatsUnlisted",
			obs: []Observation{
				{Field: "industry", Value: "Tech", Source: "web_form", ObservedAt: at(9), EventID: "e3"},
				{Field: "industry", Value: "Software", Source: "CLEARBIT", ObservedAt: at(5), EventID: "e2"},
			},
			want: map[string]Resolved{"industry": {Value: "Software", Source: "CLEARBIT", ObservedAt: at(5)}},
		},
		{
			name: "MostRecentAmongEqualAuthority",
			obs: []Observation{
				{Field: "budget", Value: "5k", Source: "web_form", ObservedAt: at(0), EventID: "e1"},
				{Field: "budget", Value: "10k", Source: "vapi", ObservedAt: at(3), EventID: "e2"},
				{Field: "city", Value: "Oslo", Source: "vapi", ObservedAt: at(3), EventID: "e2"},
			},
			want: map[string]Resolved{
				"budget": {Value: "10k", Source: "vapi", ObservedAt: at(3)},
				"city":   {Value: "Oslo", Source: "vapi", ObservedAt: at(3)},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := rules.ResolveFields(tt.obs)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ResolveFields() = %+v, want %+v", got, tt.want)
			}
			// Order of observations must not matter.
			reversed := make([]Observation, len(tt.obs))
			for i, o := range tt.obs {
				reversed[len(tt.obs)-1-i] = o
			}
			if again := rules.ResolveFields(reversed); !reflect.DeepEqual(again, got) {
				t.Errorf("ResolveFields(reversed) = %+v, want %+v", again, got)
			}
		})
	}
}

func TestFirstTouch(t *testing.T) {
	t.Parallel()
	existing := map[string]string{"utm_source": "ads", "first_seen": "2026-10-01", "utm_campaign": ""}
	incoming := map[string]string{"utm_source": "newsletter", "utm_medium": "email", "utm_campaign": "fall", "utm_term": " "}
	keepExisting, keepIncoming := maps.Clone(existing), maps.Clone(incoming)

	got := FirstTouch(existing, incoming)

	want := map[string]string{"utm_source": "ads", "first_seen": "2026-10-01", "utm_medium": "email", "utm_campaign": "fall"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("FirstTouch() = %v, want %v", got, want)
	}
	if !reflect.DeepEqual(existing, keepExisting) || !reflect.DeepEqual(incoming, keepIncoming) {
		t.Errorf("FirstTouch modified its arguments")
	}
	if again := FirstTouch(got, map[string]string{"utm_source": "retargeting"}); again["utm_source"] != "ads" {
		t.Errorf("a later touch overwrote first touch: %v", again)
	}
}
