//go:build proof

package boundary

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// receiver is a side-effect webhook receiver: it answers 200 and counts deliveries per Idempotency-Key.
// A receiver honouring the key acts once per key, so its effective actions are the distinct keys.
type receiver struct {
	srv  *httptest.Server
	mu   sync.Mutex
	keys []string // the Idempotency-Key of every delivery, in order
	acts []string // the action of every delivery
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body struct {
			Action string `json:"action"`
		}
		_ = json.NewDecoder(req.Body).Decode(&body)
		rc.mu.Lock()
		rc.keys = append(rc.keys, req.Header.Get("Idempotency-Key"))
		rc.acts = append(rc.acts, body.Action)
		rc.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// deliveries returns how many requests came in and how many per key.
func (rc *receiver) deliveries() (total int, perKey map[string]int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	perKey = map[string]int{}
	for _, k := range rc.keys {
		perKey[k]++
	}
	return len(rc.keys), perKey
}

// graph is a fake Meta Graph API: GET /{leadgen_id} answers the lead's field_data. A lead may answer
// differently on later reads (an enrichment provider that returns empty values on a retry).
type graph struct {
	srv   *httptest.Server
	mu    sync.Mutex
	leads map[string][]map[string]string // id -> answers by read (the last one repeats)
	reads map[string]int
}

func newGraph(t *testing.T) *graph {
	g := &graph{leads: map[string][]map[string]string{}, reads: map[string]int{}}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		id := req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]
		g.mu.Lock()
		answers, ok := g.leads[id]
		n := g.reads[id]
		g.reads[id]++
		g.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if !ok || req.URL.Query().Get("access_token") != "page-token" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":{"message":"Unsupported get request.","type":"GraphMethodException","code":100}}`))
			return
		}
		fields := answers[min(n, len(answers)-1)]
		var data []map[string]any
		for _, name := range []string{"email", "phone_number", "first_name", "job_title"} {
			data = append(data, map[string]any{"name": name, "values": []string{fields[name]}})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "form_id": "5555", "field_data": data})
	}))
	t.Cleanup(g.srv.Close)
	return g
}

// lead registers a lead's answers, read by read.
func (g *graph) lead(id string, answers ...map[string]string) {
	g.mu.Lock()
	g.leads[id] = answers
	g.mu.Unlock()
}

// readsOf is how often the lead was read.
func (g *graph) readsOf(id string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.reads[id]
}
