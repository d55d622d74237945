package normalize

import (
	lru "github.com/hashicorp/golang-lru/v2"
)

// PhoneCache remembers recently parsed numbers by what libphonenumber is asked (the number without its
// formatting, and the region): a lead's journey repeats its number (the form, the reply, the call, the
// CRM's webhook), often formatted differently, and libphonenumber is a sizeable share of ingest's CPU.
// It is bounded (least recently used entries go first) and safe for concurrent use. A nil *PhoneCache
// parses every time.
type PhoneCache struct {
	lru *lru.Cache[phoneInput, Value] // values without Raw
}

// maxCachedPhone keeps absurdly long inputs (which Phone refuses anyway) out of the cache.
const maxCachedPhone = 64

// NewPhoneCache holds up to size numbers (at least 1).
func NewPhoneCache(size int) *PhoneCache {
	c, err := lru.New[phoneInput, Value](max(size, 1))
	if err != nil { // only for a size below 1, ruled out above
		panic(err)
	}
	return &PhoneCache{lru: c}
}

// Phone is Phone(raw, defaultRegion), from the cache when it was parsed recently.
func (c *PhoneCache) Phone(raw, defaultRegion string) Value {
	in, problem := readPhone(raw, defaultRegion)
	if problem != "" {
		return invalid(raw, problem)
	}
	var v Value
	if c == nil || len(raw) > maxCachedPhone {
		v = in.parse()
	} else if cached, ok := c.lru.Get(in); ok {
		v = cached
	} else {
		v = in.parse()
		c.lru.Add(in, v)
	}
	v.Raw = raw
	return v
}
