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

func BenchmarkPhoneCached(b *testing.B) {
	c := NewPhoneCache(1024)
	b.ReportAllocs()
	for i := range b.N {
		c.Phone(fmt.Sprintf("(415) 555-%04d", i%512), "US")
	}
}
