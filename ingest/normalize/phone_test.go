package normalize

import "testing"

func TestPhone(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, raw, region, want string
		problem                 string // "" means valid
	}{
		{"US national with parentheses", "(415) 555-0134", "US", "+14155550134", ""},
		{"E.164 with dashes", "+1 415-555-0134", "US", "+14155550134", ""},
		{"dots", "415.555.0134", "US", "+14155550134", ""},
		{"leading 1", "1 415 555 0134", "US", "+14155550134", ""},
		{"empty region means US", "415-555-0134", "", "+14155550134", ""},
		{"lower-case region", "030 901820", "de", "+4930901820", ""},
		{"00 prefix with region DE", "004915112345678", "DE", "+4915112345678", ""},
		{"00 prefix with region US", "0044 20 7946 0958", "US", "+442079460958", ""},
		{"011 prefix from US", "011 44 20 7946 0958", "US", "+442079460958", ""},
		{"plus overrides region", "+44 20 7946 0958", "DE", "+442079460958", ""},
		{"German national with trunk 0", "0151 12345678", "DE", "+4915112345678", ""},
		{"extension dropped", "415-555-0134 ext. 12", "US", "+14155550134", ""},
		{"x extension dropped", "+1 415 555 0134 x7", "US", "+14155550134", ""},
		{"tel uri", "tel:+14155550134", "US", "+14155550134", ""},
		{"surrounding spaces", "  +14155550134 ", "US", "+14155550134", ""},
		{"empty", "", "US", "", "empty"},
		{"blank", "  ", "US", "", "empty"},
		{"vanity letters", "1-800-FLOWERS", "US", "", "contains letters"},
		{"words", "call me", "US", "", "contains letters"},
		{"absurd long", "12345678901234567890", "US", "", "too long"},
		{"German national longer than E.164 allows", "20100000000000", "DE", "", "longer than an international (E.164) number can be"},
		{"no digits", "+() -", "US", "", "no digits"},
		{"too short", "12345", "US", "", "not a valid number"},
		{"unassigned area code", "(099) 555-0134", "US", "", "not a valid number"},
		{"bad country code", "+999 1234 5678", "US", "", "not a phone number"},
		{"invalid utf-8", "415\xff5550134", "US", "", "not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Phone(tt.raw, tt.region)
			if got.Raw != tt.raw {
				t.Errorf("Raw = %q, want %q", got.Raw, tt.raw)
			}
			if tt.problem == "" {
				if !got.Valid || got.Value != tt.want || got.Problem != "" {
					t.Errorf("Phone(%q, %q) = %+v, want valid %q", tt.raw, tt.region, got, tt.want)
				}
				return
			}
			if got.Valid || got.Value != "" || !hasPrefix(got.Problem, tt.problem) {
				t.Errorf("Phone(%q, %q) = %+v, want invalid with problem %q", tt.raw, tt.region, got, tt.problem)
			}
		})
	}
}

func hasPrefix(s, prefix string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix }

func BenchmarkPhone(b *testing.B) {
	for b.Loop() {
		Phone("(415) 555-0134", "US")
	}
}
