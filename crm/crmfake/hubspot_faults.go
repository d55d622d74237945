package crmfake

import (
	"net/http"
	"slices"
)

// Faults of answers integrators have seen from HubSpot, to prove that leadgate verifies a write whose
// answer it cannot trust before any retry: an answer lost after the write was applied (a timeout), and a
// batch that answers COMPLETE with an input missing from its results (a silent no-op).
type hsFault struct {
	path  string
	key   string // omit: the input id (email for upsert, record id for update)
	lose  bool   // the request is applied, then the connection closes without an answer
	apply bool   // omit: the omitted input is still written (else it is silently not written)
}

// LoseAnswer makes the next request to path be applied and then left unanswered: the connection closes
// before any response, as when the client times out on a write that HubSpot carried out.
func (f *HubSpot) LoseAnswer(path string) {
	f.mu.Lock()
	f.faults = append(f.faults, hsFault{path: path, lose: true})
	f.mu.Unlock()
}

// OmitResult makes the next batch request to path that carries the input key (an email for batch upsert,
// a record id for batch update) answer 200 COMPLETE without a result or an error for it. With applied the
// input is written anyway; without, it is silently not written.
func (f *HubSpot) OmitResult(path, key string, applied bool) {
	f.mu.Lock()
	f.faults = append(f.faults, hsFault{path: path, key: key, apply: applied})
	f.mu.Unlock()
}

// takeFault removes and returns the first queued fault for path matching keep; the caller holds f.mu.
func (f *HubSpot) takeFault(path string, keep func(hsFault) bool) (hsFault, bool) {
	for i, x := range f.faults {
		if x.path == path && keep(x) {
			f.faults = slices.Delete(f.faults, i, i+1)
			return x, true
		}
	}
	return hsFault{}, false
}

// omitted returns the queued omission for one of keys on path, if any; the caller holds f.mu.
func (f *HubSpot) omitted(path string, keys []string) (hsFault, bool) {
	return f.takeFault(path, func(x hsFault) bool { return !x.lose && slices.Contains(keys, x.key) })
}

// withFaults applies LoseAnswer: the handler runs with its answer discarded and the connection is aborted.
func (f *HubSpot) withFaults(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		_, lose := f.takeFault(r.URL.Path, func(x hsFault) bool { return x.lose })
		f.mu.Unlock()
		if !lose {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(discard{header: http.Header{}}, r)
		panic(http.ErrAbortHandler)
	})
}

type discard struct{ header http.Header }

func (d discard) Header() http.Header         { return d.header }
func (d discard) Write(b []byte) (int, error) { return len(b), nil }
func (d discard) WriteHeader(int)             {}
