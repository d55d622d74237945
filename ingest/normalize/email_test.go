package normalize

import (
	"strings"
	"testing"
)

func TestEmail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, raw, want string
		valid           bool
		problem         string
	}{
		{"trims and lower-cases", " Jane.Doe@Example.com ", "jane.doe@example.com", true, ""},
		{"tabs and newlines around", "\tJANE@EXAMPLE.COM\n", "jane@example.com", true, ""},
		{"plus addressing", "jane+ads@example.co.uk", "jane+ads@example.co.uk", true, ""},
		{"mailto prefix", "mailto:Jane@Example.com", "jane@example.com", true, ""},
		{"IDN domain kept", "José@Bücher.DE", "josé@bücher.de", true, ""},
		{"hyphenated domain", "a@my-company.io", "a@my-company.io", true, ""},
		{"empty", "", "", false, "empty"},
		{"blank", "   ", "", false, "empty"},
		{"no at", "jane.example.com", "", false, "must contain exactly one @"},
		{"two ats", "jane@doe@example.com", "", false, "must contain exactly one @"},
		{"nothing before at", "@example.com", "", false, "missing the part before @"},
		{"nothing after at", "jane@", "", false, "missing domain"},
		{"space inside", "jane doe@example.com", "", false, "contains spaces or control characters"},
		{"no dot in domain", "jane@localhost", "", false, "domain has no dot"},
		{"double dot in domain", "jane@example..com", "", false, "domain has an empty label"},
		{"trailing dot", "jane@example.com.", "", false, "domain has an empty label"},
		{"numeric tld", "jane@10.0.0.1", "", false, "invalid top-level domain"},
		{"one letter tld", "jane@example.c", "", false, "invalid top-level domain"},
		{"domain literal", "jane@[10.0.0.1]", "", false, "domain contains an invalid character"},
		{"hyphen edge label", "jane@-example.com", "", false, "domain label starts or ends with a hyphen"},
		{"double dot in local", "jane..doe@example.com", "", false, "not a valid address"},
		{"leading dot in local", ".jane@example.com", "", false, "not a valid address"},
		{"quoted local part", `"jane"@example.com`, "", false, "not a valid address"},
		{"display name form", "Jane <jane@example.com>", "", false, "contains spaces or control characters"},
		{"local too long", strings.Repeat("a", 65) + "@example.com", "", false, "part before @ too long"},
		{"address too long", "a@" + strings.Repeat("b", 250) + ".com", "", false, "too long"},
		{"invalid utf-8", "jane\xff@example.com", "", false, "not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Email(tt.raw)
			want := Value{Value: tt.want, Raw: tt.raw, Valid: tt.valid, Problem: tt.problem}
			if got != want {
				t.Errorf("Email(%q) = %+v, want %+v", tt.raw, got, want)
			}
		})
	}
}

func BenchmarkEmail(b *testing.B) {
	for b.Loop() {
		Email(" Jane.Doe@Example.com ")
	}
}
