package normalize

import (
	"fmt"
	"testing"
)

// TestPhoneCacheAnswersLikePhone: cached or not, every input reads as Phone reads it, per region (the
// same national number is another line in another region), and the cache never holds more than its size.
func TestPhoneCacheAnswersLikePhone(t *testing.T) {
	c := NewPhoneCache(4)
	inputs := []struct{ raw, region string }{
		{"(415) 555-0134", "US"}, {"(415) 555-0134", "US"}, {"020 7946 0018", "GB"}, {"020 7946 0018", "US"},
		{"+1 415 555 0134 ext. 12", ""}, {"not a number", "US"}, {"", "US"}, {"(415) 555-0134", "US"},
	}
	for i := range 3 {
		for _, in := range inputs {
			if got, want := c.Phone(in.raw, in.region), Phone(in.raw, in.region); got != want {
				t.Errorf("round %d: cache.Phone(%q, %q) = %+v, want %+v", i, in.raw, in.region, got, want)
			}
		}
	}
	for i := range 20 {
		c.Phone(fmt.Sprintf("(415) 555-%04d", i), "US")
	}
	if n := c.lru.Len(); n > 4 {
		t.Errorf("cache holds %d numbers, want at most 4", n)
	}
	var none *PhoneCache
	if got, want := none.Phone("(415) 555-0134", "US"), Phone("(415) 555-0134", "US"); got != want {
		t.Errorf("nil cache = %+v, want %+v", got, want)
	}
}

// TestPhoneCacheSharesANumberAcrossFormats: the same line written two ways is parsed once, and each
// caller gets back its own raw text.
func TestPhoneCacheSharesANumberAcrossFormats(t *testing.T) {
	c := NewPhoneCache(8)
	a, b := c.Phone("(415) 555-0134", "US"), c.Phone("415.555.0134", "us")
	if a.Value != "+14155550134" || b.Value != a.Value {
		t.Fatalf("values %q and %q, want +14155550134 for both", a.Value, b.Value)
	}
	if a.Raw != "(415) 555-0134" || b.Raw != "415.555.0134" {
		t.Errorf("raw texts %q and %q, want each caller's own", a.Raw, b.Raw)
	}
	if n := c.lru.Len(); n != 1 {
		t.Errorf("cache holds %d entries for one number, want 1", n)
	}
	if got := c.Phone("x", "US"); got.Valid || got.Problem == "" || c.lru.Len() != 1 {
		t.Errorf("refused text %+v was cached or accepted", got)
	}
}

func BenchmarkPhoneCached(b *testing.B) {
	c := NewPhoneCache(1024)
	b.ReportAllocs()
	for i := range b.N {
		c.Phone(fmt.Sprintf("(415) 555-%04d", i%512), "US")
	}
}
