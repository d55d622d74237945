package chaos

import (
	"reflect"
	"testing"

	"github.com/leadgate/leadgate/ingest/normalize"
)

func TestGenerateIsDeterministic(t *testing.T) {
	a, b := Generate(200, 100, 7), Generate(200, 100, 7)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed gave two different scenarios")
	}
	if c := Generate(200, 100, 8); reflect.DeepEqual(a.Events, c.Events) {
		t.Fatal("another seed gave the same events")
	}
}

func TestGenerateSurfaceFormsNormalizeToOnePerson(t *testing.T) {
	sc := Generate(500, 100, 1)
	emails, phones := map[string]bool{}, map[string]bool{}
	for _, l := range sc.Leads {
		if emails[l.Email] || phones[l.Phone] {
			t.Fatalf("lead %d shares an identity with another lead", l.Index)
		}
		emails[l.Email], phones[l.Phone] = true, true
	}
	rawForms := map[string]bool{}
	for _, e := range sc.Events {
		l := sc.Leads[e.Lead]
		if got := normalize.Email(e.Email); !got.Valid || got.Value != l.Email {
			t.Fatalf("event %s email %q normalizes to %+v, want %s", e.ID, e.Email, got, l.Email)
		}
		if got := normalize.Phone(e.Phone, "US"); !got.Valid || got.Value != l.Phone {
			t.Fatalf("event %s phone %q normalizes to %+v, want %s", e.ID, e.Phone, got, l.Phone)
		}
		rawForms[e.Email] = true
	}
	if len(rawForms) <= len(sc.Leads) {
		t.Fatalf("only %d raw email forms for %d leads: surface forms do not vary", len(rawForms), len(sc.Leads))
	}
}

func TestGenerateJourneysRaceLikeTheScenarioSays(t *testing.T) {
	sc := Generate(2000, 500, 3)
	st := describe(&sc)
	share := func(n, of int) float64 { return float64(n) / float64(of) }
	if d := share(st.InFlightDuplicates, st.UniqueEvents); d < 0.07 || d > 0.13 {
		t.Errorf("in-flight duplicates are %.3f of events, want about 0.10", d)
	}
	if st.SameSecondPairs == 0 || st.RepeatForms == 0 {
		t.Errorf("want same-second channel pairs and repeat forms, got %+v", st)
	}
	outOfOrder, won := 0, 0
	for i, l := range sc.Leads {
		if len(l.Events) == 0 || sc.Events[l.Events[0]].Channel != 0 {
			t.Fatalf("lead %d does not start with a form", i)
		}
		for _, a := range l.Events {
			for _, b := range l.Events {
				ea, eb := sc.Events[a], sc.Events[b]
				if ea.Occurred < eb.Occurred && ea.SendAt > eb.SendAt {
					outOfOrder++
				}
			}
			if sc.Events[a].Channel == 3 {
				won++
			}
		}
	}
	if outOfOrder == 0 {
		t.Error("no event is delivered after a later one: no out-of-order jitter")
	}
	if w := share(won, len(sc.Leads)); w < 0.1 || w > 0.3 {
		t.Errorf("%.3f of leads closed won, want a fraction around 0.19", w)
	}
	for i := 1; i < len(sc.Events); i++ {
		if sc.Events[i].SendAt < sc.Events[i-1].SendAt || sc.Events[i].Index != i {
			t.Fatalf("events are not ordered by send time at %d", i)
		}
	}
}
