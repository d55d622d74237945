package demo

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
)

// Graph is a tiny stand-in for Meta's Graph API: it answers GET /{leadgen_id}
// with the lead's field_data, so Facebook lead webhooks (which carry only an
// id) hydrate into full leads during the demo.
type Graph struct {
	mu    sync.Mutex
	leads map[string]*person
}

// NewGraph returns an empty fake Graph API.
func NewGraph() *Graph { return &Graph{leads: map[string]*person{}} }

func (g *Graph) add(p *person) {
	g.mu.Lock()
	g.leads[p.leadgenID] = p
	g.mu.Unlock()
}

// ServeHTTP implements the one endpoint hydration calls.
func (g *Graph) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
	g.mu.Lock()
	p, ok := g.leads[id]
	g.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":{"message":"Unsupported get request.","type":"GraphMethodException","code":100}}`))
		return
	}
	field := func(name, v string) map[string]any { return map[string]any{"name": name, "values": []string{v}} }
	_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "form_id": "5555", "ad_id": "7777", "campaign_id": "3333",
		"field_data": []any{field("email", p.email), field("phone_number", p.phone), field("first_name", p.first),
			field("last_name", p.last), field("company_name", p.company)}})
}
