package api_test

import (
	"net/http"
	"testing"
)

// A list's ?cursor= must be a key of that list (a UUID for contacts and events, an integer id for dead
// letters and the audit log): anything else is a 400 naming the cursor, never a server error or an
// empty page that looks like the end.
func TestAListRefusesACursorThatIsNotOneOfItsKeys(t *testing.T) {
	t.Parallel()
	e := newLCEnv(t)
	for _, tc := range []struct{ path, ok string }{
		{"/contacts?cursor=12", "/contacts?cursor=6f1c2b1e-0d8a-4c55-9a55-1f0e2a3b4c5d"},
		{"/events?cursor=12", "/events?cursor=6f1c2b1e-0d8a-4c55-9a55-1f0e2a3b4c5d"},
		{"/dead-letters?cursor=abc", "/dead-letters?cursor=12"},
		{"/audit?cursor=abc", "/audit?cursor=12"},
	} {
		if status, body := e.call(http.MethodGet, tc.path, nil); status != http.StatusBadRequest || body["field"] != "cursor" {
			t.Errorf("GET %s = %d %v, want 400 naming the cursor", tc.path, status, body)
		}
		if status, body := e.call(http.MethodGet, tc.ok, nil); status != http.StatusOK {
			t.Errorf("GET %s = %d %v, want 200", tc.ok, status, body)
		}
	}
}
