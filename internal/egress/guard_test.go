package egress_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/leadgate/leadgate/internal/egress"
)

// The outbound guard (CRMs, providers, the side-effect webhook) takes http too, and its refusals say how
// to allow the target; IP and CIDR entries allow addresses, name entries the name.
func TestOutboundCheckURL(t *testing.T) {
	cases := []struct {
		url     string
		allowed []string
		ok      bool
	}{
		{"http://crm.example.com/api/3", nil, true},
		{"https://api.hubapi.com", nil, true},
		{"ftp://crm.example.com/", nil, false},
		{"http://127.0.0.1:6379", nil, false},
		{"http://169.254.169.254/latest/meta-data/", nil, false},
		{"http://10.1.2.3/", nil, false},
		{"http://localhost:8080/", nil, false},
		{"http://10.1.2.3/", []string{"10.0.0.0/8"}, true},
		{"http://[fd00::5]/", []string{"fd00::/8"}, true},
		{"http://127.0.0.1:9999/", []string{"127.0.0.1"}, true},
		{"http://127.0.0.2:9999/", []string{"127.0.0.1"}, false},
		{"http://localhost:8080/", []string{"localhost"}, true},
	}
	for _, tc := range cases {
		_, err := egress.Outbound(tc.allowed).CheckURL(tc.url)
		if (err == nil) != tc.ok {
			t.Errorf("CheckURL(%q) allowed %v = %v, want ok=%v", tc.url, tc.allowed, err, tc.ok)
		}
		if err != nil && strings.HasPrefix(tc.url, "http") && !strings.Contains(err.Error(), egress.AllowSetting) {
			t.Errorf("refusal %q does not name %s", err, egress.AllowSetting)
		}
	}
}

// A CIDR entry opens the addresses it covers whatever name resolves to them, and no others.
func TestOutboundDialAllowsCIDR(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	port := srv.URL[strings.LastIndexByte(srv.URL, ':'):]
	g := egress.Outbound([]string{"127.0.0.0/8"})
	g.Resolver = egress.FixedResolver{"crm.internal": {"127.0.0.1"}, "meta.internal": {"169.254.169.254"}}
	resp, err := g.Client().Get("http://crm.internal" + port + "/")
	if err != nil {
		t.Fatalf("allowed CIDR: %v", err)
	}
	resp.Body.Close()
	if _, err := g.Client().Get("http://meta.internal" + port + "/"); !egress.IsBlocked(err) {
		t.Fatalf("metadata address outside the CIDR: err %v, want blocked", err)
	}
	if hits.Load() != 1 {
		t.Fatalf("hits %d, want 1", hits.Load())
	}
}

func TestValidEntry(t *testing.T) {
	for entry, ok := range map[string]bool{"relay.internal": true, "10.0.0.0/8": true, "127.0.0.1": true, "::1": true, "fd00::/8": true,
		"127.0.0.1:8080": true, "[::1]:8080": true, "http://x": false, "10.0.0.0/33": false, "a b": false, "user@host": false} {
		if err := egress.ValidEntry(entry); (err == nil) != ok {
			t.Errorf("ValidEntry(%q) = %v, want ok=%v", entry, err, ok)
		}
	}
	var be *egress.BlockedError
	if _, err := (&egress.Guard{}).CheckURL("http://example.com"); !errors.As(err, &be) || !strings.Contains(be.Reason, "only https") {
		t.Errorf("the zero guard (alert channels) must stay https-only: %v", err)
	}
}

// An IP:port entry opens that one port: the demo's fake API, not Redis or Postgres beside it.
func TestOutboundIPPortEntryAllowsOnlyThatPort(t *testing.T) {
	var hits atomic.Int32
	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer allowed.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(100) }))
	defer other.Close()
	g := egress.Outbound([]string{strings.TrimPrefix(allowed.URL, "http://")})
	if _, err := g.CheckURL(allowed.URL + "/api"); err != nil {
		t.Fatalf("CheckURL of the allowed port: %v", err)
	}
	for _, u := range []string{other.URL + "/", "http://127.0.0.1:6379/", "http://127.0.0.1/"} {
		if _, err := g.CheckURL(u); !egress.IsBlocked(err) {
			t.Errorf("CheckURL(%q) = %v, want blocked", u, err)
		}
	}
	resp, err := g.Client().Get(allowed.URL + "/")
	if err != nil {
		t.Fatalf("dial the allowed port: %v", err)
	}
	resp.Body.Close()
	if _, err := g.Client().Get(other.URL + "/"); !egress.IsBlocked(err) {
		t.Fatalf("dial another port of the same address: err %v, want blocked", err)
	}
	if err := g.CheckHost("127.0.0.1"); !egress.IsBlocked(err) {
		t.Fatalf("CheckHost without a port: %v, want blocked (an IP:port entry needs the port)", err)
	}
	if hits.Load() != 1 {
		t.Fatalf("hits %d, want 1", hits.Load())
	}
}
