package crm

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// Read-after-write. A write whose answer cannot be trusted (a timeout, a 5xx, an answer that does not
// decode, a batch that answers COMPLETE with an input missing from its results) may or may not have been
// applied. Resending it blindly can create a second record (a create), and taking a missing result for a
// success hides a silent no-op. So before any retry the contacts are read back: a contact that holds every
// value of the write (its sync stamp included) was written and is recorded as written; the others fail with
// notWritten's error, and their retry reads again before it writes.

// hsSearchLag is how long a retry of an unconfirmed create waits: the search index, the only way to find a
// phone-only contact, lags writes by seconds.
const hsSearchLag = 30 * time.Second

// verifyWrites reads back the contacts of a write of kind and records each as written or failed.
func (h *hubSpot) verifyWrites(ctx context.Context, kind string, items []*hsItem, props func(*hsItem) map[string]string, notWritten func(*hsItem) error) {
	want := map[string]string{"email": "", "phone": ""}
	for _, it := range items {
		for k := range props(it) {
			want[k] = ""
		}
	}
	names := sortedKeys(want)
	remote := map[*hsItem]hsObject{}
	var err error
	switch kind {
	case hsUpsert:
		var found map[string]hsObject
		if found, err = h.batchRead(ctx, items, "email", names, func(it *hsItem) string { return it.c.Email }); err == nil {
			for _, it := range items {
				if o, ok := found[it.c.Email]; ok {
					remote[it] = o
				}
			}
		}
	case hsUpdate:
		var found map[string]hsObject
		if found, err = h.batchRead(ctx, items, "", names, func(it *hsItem) string { return it.id }); err == nil {
			for _, it := range items {
				if o, ok := found[it.id]; ok {
					remote[it] = o
				}
			}
		}
	case hsCreate:
		// A contact to create was not found before: a hit now is the one the write created.
		if err = h.searchPhones(ctx, items, names); err == nil {
			for _, it := range items {
				if it.id != "" {
					remote[it] = hsObject{ID: flexString(it.id), Properties: pointers(it.remote)}
				}
			}
		}
	}
	for _, it := range items {
		o, ok := remote[it]
		switch {
		case err != nil && destinationFault(err):
			it.fail(err)
		case ok && holds(o.values(), props(it)):
			it.id = string(o.ID)
			if kind != hsUpdate {
				it.res.Created = true
			}
		default:
			if kind == hsCreate {
				it.id, it.remote = "", nil // a hit that does not hold the write is not the contact we created
			}
			it.fail(notWritten(it))
		}
	}
}

// holds reports whether a contact holds every value of a write, as HubSpot may echo it: a time or a number
// in another notation counts as the same value.
func holds(remote, written map[string]string) bool {
	for k, v := range written {
		if r := remote[k]; !sameValue(r, v) && !sameInstant(r, v) && !sameNumber(r, v) {
			return false
		}
	}
	return true
}

func sameInstant(a, b string) bool {
	x, err1 := time.Parse(time.RFC3339Nano, strings.TrimSpace(a))
	y, err2 := time.Parse(time.RFC3339Nano, strings.TrimSpace(b))
	return err1 == nil && err2 == nil && x.Equal(y)
}

func sameNumber(a, b string) bool {
	x, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
	y, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
	return err1 == nil && err2 == nil && x == y
}

func pointers(m map[string]string) map[string]*string {
	out := make(map[string]*string, len(m))
	for k, v := range m {
		out[k] = &v
	}
	return out
}
