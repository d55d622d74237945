package alarm

import (
	"strings"
	"testing"
)

func TestEvaluateRefusals(t *testing.T) {
	r := DefaultRefusalRule()
	cases := []struct {
		name    string
		recent  string
		firing  bool
		want    bool
		refused int
		seen    int
	}{
		{"four refusals stay quiet", "aaassss", false, false, 4, 7},
		{"five of the last twenty fire", "aaasssss", false, true, 5, 8},
		{"refusals older than the window do not count", "sssss" + strings.Repeat("a", 20), false, false, 0, 20},
		{"still firing while refusals continue", "sssssaaaas", true, true, 6, 10},
		{"five accepted in a row clear it", "sssssaaaaa", true, false, 5, 10},
		{"a mixed tail keeps it firing", "sssssaaaasa", true, true, 6, 11},
		{"malformed bodies are not signature refusals", "mmmmmmmm", false, false, 0, 8},
	}
	for _, c := range cases {
		v := EvaluateRefusals(r, c.recent, c.firing)
		if v.Firing != c.want || v.Refused != c.refused || v.Considered != c.seen {
			t.Errorf("%s: %+v, want firing %v with %d of %d", c.name, v, c.want, c.refused, c.seen)
		}
	}
	msg := RefusalMessage("Typeform", RefusalVerdict{Refused: 7, Considered: 9}, "")
	if msg != "7 of the last 9 deliveries to source Typeform were refused: signature mismatch" {
		t.Errorf("message %q", msg)
	}
}

func FuzzEvaluateRefusals(f *testing.F) {
	f.Add("sssssaaaaa", true)
	f.Add("", false)
	f.Fuzz(func(t *testing.T, recent string, firing bool) {
		v := EvaluateRefusals(DefaultRefusalRule(), recent, firing)
		if v.Refused > v.Considered || v.Considered > DefaultRefusalWindow || (v.Firing && !firing && v.Refused < DefaultRefusalThreshold) {
			t.Fatalf("%q firing=%v: %+v", recent, firing, v)
		}
	})
}
