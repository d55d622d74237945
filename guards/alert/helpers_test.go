package alert_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http/httptest"
	"net/netip"
	"time"

	"github.com/leadgate/leadgate/guards/alert"
)

// fakeResolver answers from a table, like a DNS server the attacker controls.
type fakeResolver map[string][]string

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	addrs, ok := f[host]
	if !ok {
		return nil, fmt.Errorf("no such host %s", host)
	}
	out := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		out[i] = netip.MustParseAddr(a)
	}
	return out, nil
}

// trusting returns a TLS config that trusts the httptest servers' certificate
// (valid for 127.0.0.1 and *.example.com).
func trusting(srv *httptest.Server) *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return &tls.Config{RootCAs: pool}
}

// localGuard allows the test servers on 127.0.0.1 (an admin allowlist entry).
func localGuard(srv *httptest.Server, allowed ...string) *alert.Guard {
	return &alert.Guard{AllowedHosts: append([]string{"127.0.0.1"}, allowed...), TLS: trusting(srv), Timeout: 5 * time.Second,
		Resolver: fakeResolver{}}
}

func message(action string) alert.Message {
	return alert.Message{ID: "alert:health:1:outbox_oldest_seconds:100", DedupKey: "leadgate:default:health:1:outbox_oldest_seconds:100",
		Workspace: "default", Type: "health", Action: action, Severity: alert.SeverityWarning, Title: "Health: outbox_oldest_seconds is 4000",
		Text: "Age of the oldest outbox row: 4000 seconds.", Details: map[string]any{"value": 4000}, At: time.Unix(1700000000, 0)}
}
