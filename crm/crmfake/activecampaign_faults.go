package crmfake

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"time"
)

// maxHang bounds how long a timeout-after-commit answer is held when the client never gives up.
const maxHang = time.Minute

// TimeoutAfterCommit makes the next request matching method and path ("" matches any) do its work (the
// write is committed) and then never answer: the client sees a timeout for a write that happened, the
// case where an answer cannot be trusted and a retry must look before it writes again.
func (f *ActiveCampaign) TimeoutAfterCommit(method, path string) {
	f.mu.Lock()
	f.hangs = append(f.hangs, Response{Method: method, Path: path})
	f.mu.Unlock()
}

// hangAfterCommit wraps the routes: a request matching a TimeoutAfterCommit injection is served into a
// discarded recorder, then held until the client goes away.
func (f *ActiveCampaign) hangAfterCommit(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		i := slices.IndexFunc(f.hangs, func(q Response) bool {
			return (q.Method == "" || q.Method == r.Method) && (q.Path == "" || q.Path == r.URL.Path)
		})
		if i >= 0 {
			f.hangs = slices.Delete(f.hangs, i, i+1)
		}
		f.mu.Unlock()
		if i < 0 {
			h.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(httptest.NewRecorder(), r)
		select {
		case <-r.Context().Done():
		case <-time.After(maxHang):
		}
	})
}
