package alert_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/leadgate/leadgate/guards/alert"
)

func TestCheckURL(t *testing.T) {
	g := &alert.Guard{}
	cases := []struct {
		url     string
		blocked bool
		reason  string
	}{
		{"https://hooks.slack.com/services/T0/B0/xyz", false, ""},
		{"https://8.8.8.8/hook", false, ""},
		{"http://hooks.slack.com/services/x", true, "only https"},
		{"ftp://example.com/", true, "only https"},
		{"https://127.0.0.1/", true, "not public"},
		{"https://127.1.2.3:8443/", true, "not public"},
		{"https://10.0.0.5/", true, "not public"},
		{"https://172.16.9.1/", true, "not public"},
		{"https://192.168.1.1/", true, "not public"},
		{"https://169.254.169.254/latest/meta-data/", true, "not public"},
		{"https://100.64.0.1/", true, "not public"},
		{"https://0.0.0.0/", true, "not public"},
		{"https://224.0.0.1/", true, "not public"},
		{"https://[::1]/", true, "not public"},
		{"https://[fe80::1]/", true, "not public"},
		{"https://[fd00::1]/", true, "not public"},
		{"https://[::ffff:127.0.0.1]/", true, "not public"},
		{"https://[::ffff:10.0.0.1]/", true, "not public"},
		{"https://localhost/", true, "localhost"},
		{"https://api.localhost/", true, "localhost"},
		{"https://user:pw@example.com/", true, "credentials"},
		{"https:///nohost", true, "no host"},
	}
	for _, tc := range cases {
		t.Run(tc.url, func(t *testing.T) {
			_, err := g.CheckURL(tc.url)
			var be *alert.BlockedError
			if tc.blocked != errors.As(err, &be) {
				t.Fatalf("CheckURL(%q) = %v, want blocked=%v", tc.url, err, tc.blocked)
			}
			if tc.blocked && !strings.Contains(be.Reason, tc.reason) {
				t.Fatalf("reason %q, want it to mention %q", be.Reason, tc.reason)
			}
		})
	}
	allowed := &alert.Guard{AllowedHosts: []string{"127.0.0.1", "Relay.Internal"}}
	for _, u := range []string{"https://127.0.0.1:9443/hook", "https://relay.internal/hook"} {
		if _, err := allowed.CheckURL(u); err != nil {
			t.Errorf("allowlisted %s refused: %v", u, err)
		}
	}
	if _, err := allowed.CheckURL("http://127.0.0.1/"); err == nil {
		t.Error("an allowlisted host must still use https")
	}
}

func TestPublicAddr(t *testing.T) {
	for addr, want := range map[string]bool{"1.1.1.1": true, "2606:4700:4700::1111": true, "127.0.0.1": false, "10.1.1.1": false,
		"198.18.0.1": false, "240.0.0.1": false, "255.255.255.255": false, "::": false, "ff02::1": false, "64:ff9b::a00:1": false} {
		if got := alert.PublicAddr(netip.MustParseAddr(addr)); got != want {
			t.Errorf("PublicAddr(%s) = %v, want %v", addr, got, want)
		}
	}
}

// TestDialTimeResolution: a public-looking name that resolves to a private
// address is refused when dialing, before any byte reaches the target.
func TestDialTimeResolution(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	port := srv.URL[strings.LastIndexByte(srv.URL, ':'):]
	g := &alert.Guard{TLS: trusting(srv), Resolver: fakeResolver{
		"rebind.example.com":  {"127.0.0.1"},
		"private.example.com": {"10.20.30.40"},
		"meta.example.com":    {"169.254.169.254"},
		"mixed.example.com":   {"10.0.0.1", "127.0.0.1"},
		"alerts.example.com":  {"127.0.0.1"},
	}}
	for _, host := range []string{"rebind.example.com", "private.example.com", "meta.example.com", "mixed.example.com"} {
		t.Run(host, func(t *testing.T) {
			_, err := g.Client().Post("https://"+host+port+"/hook", "application/json", strings.NewReader("{}"))
			var be *alert.BlockedError
			if !errors.As(err, &be) || !strings.Contains(be.Reason, "not public") {
				t.Fatalf("err %v, want a BlockedError for a private resolution", err)
			}
		})
	}
	if hits.Load() != 0 {
		t.Fatalf("the private target received %d requests", hits.Load())
	}
	// An admin allows the name: the same resolution is now fine.
	g.AllowedHosts = []string{"alerts.example.com"}
	resp, err := g.Client().Post("https://alerts.example.com"+port+"/hook", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatalf("allowlisted name: %v", err)
	}
	resp.Body.Close()
	if hits.Load() != 1 {
		t.Fatalf("hits %d, want 1", hits.Load())
	}
}

// TestRedirectsAreChecked: an allowed relay that redirects to a private or
// plain-http target is not followed there.
func TestRedirectsAreChecked(t *testing.T) {
	var internalHits atomic.Int32
	internal := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { internalHits.Add(1) }))
	defer internal.Close()
	internalPort := internal.URL[strings.LastIndexByte(internal.URL, ':'):]
	target := ""
	relay := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target, http.StatusTemporaryRedirect)
	}))
	defer relay.Close()
	relayPort := relay.URL[strings.LastIndexByte(relay.URL, ':'):]
	g := &alert.Guard{AllowedHosts: []string{"relay.example.com"}, TLS: trusting(relay),
		Resolver: fakeResolver{"relay.example.com": {"127.0.0.1"}, "internal.example.com": {"127.0.0.1"}}}
	for name, to := range map[string]string{
		"to a name resolving to loopback": "https://internal.example.com" + internalPort + "/admin",
		"to a literal private IP":         "https://10.0.0.7/admin",
		"to the metadata service":         "https://169.254.169.254/latest/meta-data/",
		"to plain http":                   "http://internal.example.com" + internalPort + "/admin",
	} {
		t.Run(name, func(t *testing.T) {
			target = to
			_, err := g.Client().Post("https://relay.example.com"+relayPort+"/hook", "application/json", strings.NewReader("{}"))
			var be *alert.BlockedError
			if !errors.As(err, &be) {
				t.Fatalf("err %v, want a BlockedError", err)
			}
		})
	}
	if internalHits.Load() != 0 {
		t.Fatalf("the internal target received %d requests", internalHits.Load())
	}
}
