package alert

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// BlockedError says an outbound target was refused by the SSRF guard.
type BlockedError struct {
	Target string
	Reason string
}

func (e *BlockedError) Error() string { return "blocked outbound target " + e.Target + ": " + e.Reason }

// Resolver looks up a host's addresses; *net.Resolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Guard keeps alert channels (and the heartbeat ping) from reaching
// leadgate's own network: URLs must be https; a target on a loopback,
// private, link-local, multicast, unspecified or otherwise non-public address
// is refused unless its host is in AllowedHosts. The address is checked after
// DNS resolution, on the connection actually dialed (a net.Dialer Control
// hook), and again on every redirect, so neither DNS rebinding nor a redirect
// to 169.254.169.254 gets through.
type Guard struct {
	// AllowedHosts are host names or literal IPs an admin allows even on
	// non-public addresses (exact, case-insensitive match).
	AllowedHosts []string
	// Resolver defaults to net.DefaultResolver (tests inject one).
	Resolver Resolver
	// TLS overrides the TLS configuration (tests trust their own CA).
	TLS *tls.Config
	// Timeout bounds one request (default 10 s).
	Timeout time.Duration
}

// reserved are non-public ranges netip's predicates do not cover.
var reserved = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // TEST-NET-1
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // TEST-NET-2
	netip.MustParsePrefix("203.0.113.0/24"),  // TEST-NET-3
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, broadcast
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64 (may embed a private IPv4)
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
}

// PublicAddr reports whether ip may be reached without an allowlist entry.
func PublicAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return false
	}
	for _, p := range reserved {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

func (g *Guard) allowed(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, h := range g.AllowedHosts {
		if strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".") == host {
			return true
		}
	}
	return false
}

// CheckURL validates a URL before it is saved or used: https, a host, no
// credentials in it, and a literal IP only when it is public or allowed.
// Host names are checked again after resolution, when dialing.
func (g *Guard) CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, &BlockedError{Target: raw, Reason: "not a URL"}
	}
	if u.Scheme != "https" {
		return nil, &BlockedError{Target: u.Redacted(), Reason: "only https URLs are allowed"}
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, &BlockedError{Target: u.Redacted(), Reason: "the URL has no host"}
	}
	if u.User != nil {
		return nil, &BlockedError{Target: u.Redacted(), Reason: "credentials in the URL are not allowed"}
	}
	if err := g.checkHost(u.Hostname()); err != nil {
		return nil, err
	}
	return u, nil
}

// checkHost refuses a literal non-public IP that is not allowlisted.
func (g *Guard) checkHost(host string) error {
	if g.allowed(host) {
		return nil
	}
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil && !PublicAddr(ip) {
		return &BlockedError{Target: host, Reason: "the address is not public (loopback, private, link-local or reserved); an admin may allow this host"}
	}
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return &BlockedError{Target: host, Reason: "localhost is not allowed; an admin may allow this host"}
	}
	return nil
}

// DialContext resolves host itself, refuses non-public addresses of hosts
// that are not allowed, and dials the checked address with a Control hook
// that checks the socket's address once more.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("alert: dial %s: %w", addr, err)
	}
	allowed := g.allowed(host)
	if err := g.checkHost(host); err != nil {
		return nil, err
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		ips = []netip.Addr{ip}
	} else {
		if ips, err = g.resolver().LookupNetIP(ctx, "ip", host); err != nil {
			return nil, fmt.Errorf("alert: resolve %s: %w", host, err)
		}
	}
	d := &net.Dialer{Timeout: 10 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		if allowed {
			return nil
		}
		ap, err := netip.ParseAddrPort(address)
		if err != nil || !PublicAddr(ap.Addr()) {
			return &BlockedError{Target: host + " (" + address + ")", Reason: "resolves to an address that is not public"}
		}
		return nil
	}}
	var errs []error
	for _, ip := range ips {
		if !allowed && !PublicAddr(ip) {
			errs = append(errs, &BlockedError{Target: host + " (" + ip.String() + ")", Reason: "resolves to an address that is not public; an admin may allow this host"})
			continue
		}
		conn, err := d.DialContext(ctx, network, net.JoinHostPort(ip.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("alert: %s has no addresses", host)
	}
	return nil, errors.Join(errs...)
}

func (g *Guard) resolver() Resolver {
	if g.Resolver != nil {
		return g.Resolver
	}
	return net.DefaultResolver
}

// maxRedirects bounds how many redirects an alert request follows.
const maxRedirects = 3

// Client returns an HTTP client whose every connection and redirect goes
// through the guard. It never uses a proxy from the environment: a proxy
// would dial on our behalf and bypass the address check.
func (g *Guard) Client() *http.Client {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           g.DialContext,
		TLSClientConfig:       g.TLS,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 15 * time.Second,
		MaxIdleConns:          10,
		IdleConnTimeout:       60 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	timeout := g.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	return &http.Client{Transport: tr, Timeout: timeout, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("alert: more than %d redirects", maxRedirects)
		}
		_, err := g.CheckURL(req.URL.String())
		return err
	}}
}
