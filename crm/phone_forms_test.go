package crm

import (
	"slices"
	"testing"
)

func TestPhoneFormsCoverWhatPeopleType(t *testing.T) {
	t.Parallel()
	forms := PhoneForms("+14155550134")
	for _, want := range []string{"+14155550134", "(415) 555-0134", "415-555-0134", "4155550134", "14155550134", "+1 415-555-0134", "415.555.0134"} {
		if !slices.Contains(forms, want) {
			t.Errorf("PhoneForms(+14155550134) lacks %q; got %q", want, forms)
		}
	}
	if got := PhoneForms("not a phone"); got != nil {
		t.Errorf("PhoneForms(not a phone) = %q, want nil", got)
	}
	de := PhoneForms("+4930123456")
	if !slices.Contains(de, "030 123456") {
		t.Errorf("German national form with trunk prefix missing: %q", de)
	}
}

func TestSamePhoneReadsStoredFormsInOurRegion(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		remote, ours string
		want         bool
	}{
		{"(415) 555-0134", "+14155550134", true},
		{"415.555.0134", "+14155550134", true},
		{"+1 415 555 0134", "+14155550134", true},
		{"030 123456", "+4930123456", true},
		{"(415) 555-0135", "+14155550134", false},
		{"", "+14155550134", false},
		{"(415) 555-0134", "", false},
	} {
		if got := samePhone(c.remote, c.ours); got != c.want {
			t.Errorf("samePhone(%q, %q) = %v, want %v", c.remote, c.ours, got, c.want)
		}
	}
}
