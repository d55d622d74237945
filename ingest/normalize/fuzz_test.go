package normalize

import (
	"strings"
	"testing"
)

// FuzzNormalize checks the normalizers' contract on arbitrary text: Raw is kept, Valid and Value agree,
// an invalid value says why, a valid email is trimmed lower-case, a valid phone is E.164, and Name is
// idempotent.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{" Jane.Doe@Example.com ", "(415) 555-0134", "004915112345678", "jANE o'neil-smith", "josé@bücher.de", "+1 415 555 0134 x7", "12345678901234567890"} {
		f.Add(s, "US")
	}
	f.Add("0151 12345678", "DE")
	f.Fuzz(func(t *testing.T, raw, region string) {
		e := Email(raw)
		if e.Raw != raw || e.Valid != (e.Value != "") || e.Valid == (e.Problem != "") {
			t.Fatalf("Email(%q) = %+v", raw, e)
		}
		if e.Valid && (e.Value != strings.ToLower(e.Value) || e.Value != strings.TrimSpace(e.Value) || strings.Count(e.Value, "@") != 1) {
			t.Fatalf("Email(%q) valid but not canonical: %q", raw, e.Value)
		}
		if e.Valid && Email(e.Value).Value != e.Value {
			t.Fatalf("Email not idempotent on %q", e.Value)
		}
		p := Phone(raw, region)
		if p.Raw != raw || p.Valid != (p.Value != "") || p.Valid == (p.Problem != "") {
			t.Fatalf("Phone(%q) = %+v", raw, p)
		}
		if p.Valid && (!strings.HasPrefix(p.Value, "+") || strings.Trim(p.Value[1:], "0123456789") != "" || len(p.Value) > 16) {
			t.Fatalf("Phone(%q, %q) valid but not E.164: %q", raw, region, p.Value)
		}
		if p.Valid && Phone(p.Value, "").Value != p.Value {
			t.Fatalf("Phone not idempotent on %q", p.Value)
		}
		if n := Name(raw); Name(n) != n {
			t.Fatalf("Name not idempotent: %q → %q → %q", raw, n, Name(n))
		}
	})
}

// FuzzCompactNumberReadsAlike: libphonenumber reads a number without its formatting as the same number as
// the number written out, in every region, so Phone may parse the compact form. Text that is no number
// may be refused in other words (two digits with a space between are not viable, "00" is a bare
// international prefix).
func FuzzCompactNumberReadsAlike(f *testing.F) {
	for _, s := range []string{"(415) 555-0134", "+44 (0) 20 7946 0958", "0151 / 123 456 78", "+1.415.555.0134", "1-800-FLOWERS",
		"415 555 0134;123", "+) 49 30 1234567", "(0)", "++1 415 555 0134", "0039 06 1234 5678", "+39 06 1234 5678"} {
		f.Add(s, "US")
	}
	f.Add("020 7946 0018", "GB")
	f.Add("06 12 34 56 78", "FR")
	f.Fuzz(func(t *testing.T, s, region string) {
		c := compactNumber(s)
		if c == s || countDigits(s) > maxPhoneDigits { // Phone refuses longer numbers before parsing
			return
		}
		if strings.Trim(c, "+0123456789") != "" || strings.LastIndex(c, "+") > 0 {
			t.Fatalf("compactNumber(%q) = %q, want only digits after an optional leading +", s, c)
		}
		written, compact := phoneInput{s, region}.parse(), phoneInput{c, region}.parse()
		if written.Value != compact.Value || written.Valid != compact.Valid || (compact.Problem == "") != compact.Valid {
			t.Fatalf("region %q: %q reads as %+v, its compact form %q as %+v", region, s, written, c, compact)
		}
	})
}
