// Package egress keeps leadgate's outbound requests to operator-configured URLs (alert channels, the
// heartbeat, CRM destinations, hydration providers, the side-effect webhook) off leadgate's own network:
// a target on a loopback, private, link-local, metadata, multicast or reserved address is refused unless
// an admin allowed it. The check runs on the address actually dialed, after DNS resolution, so a public
// name that resolves (or re-resolves) to 169.254.169.254 gets nowhere.
package egress

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// AllowSetting is the environment variable listing the private hosts, addresses and CIDRs CRM
// destinations, hydration providers and the side-effect webhook may reach (and alert channels too).
const AllowSetting = "LEADGATE_EGRESS_ALLOWED_HOSTS"

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

// Guard checks outbound URLs and dials only public addresses, or those allowed. URLs must be https
// unless AllowHTTP; the address is checked after DNS resolution, on the connection actually dialed (a
// net.Dialer Control hook), and redirects are dialed through the same check.
type Guard struct {
	// AllowedHosts are host names (exact, case-insensitive), literal IPs, CIDRs and IP:port pairs an
	// admin allows even on non-public addresses. An IP or CIDR entry allows that address whatever name
	// resolves to it; an IP:port entry allows that one port of it (a local fake, not the whole host).
	AllowedHosts []string
	// AllowHTTP accepts plain http URLs (CRM and webhook targets); alert channels stay https-only.
	AllowHTTP bool
	// Hint tells the reader of a refusal how to allow the target (default "an admin may allow this host").
	Hint string
	// Resolver defaults to net.DefaultResolver (tests inject one).
	Resolver Resolver
	// TLS overrides the TLS configuration (tests trust their own CA).
	TLS *tls.Config
	// Timeout bounds one request of Client (default 10 s).
	Timeout time.Duration
}

// Outbound is the guard of CRM destinations, hydration providers and the side-effect webhook: http or
// https, public addresses plus allowed (the entries of LEADGATE_EGRESS_ALLOWED_HOSTS).
func Outbound(allowed []string) *Guard {
	return &Guard{AllowedHosts: allowed, AllowHTTP: true, Hint: "set " + AllowSetting + " to allow it"}
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

// ValidEntry checks one allowlist entry: a host name, an IP, a CIDR or an IP:port.
func ValidEntry(e string) error {
	e = strings.TrimSpace(e)
	if e == "" || strings.ContainsAny(e, " /:@?#") && !isAddrOrPrefix(e) && !isAddrPort(e) {
		return fmt.Errorf("%q is not a host name, IP address, CIDR or IP:port", e)
	}
	return nil
}

func isAddrPort(e string) bool {
	_, err := netip.ParseAddrPort(e)
	return err == nil
}

func isAddrOrPrefix(e string) bool {
	if _, err := netip.ParseAddr(strings.Trim(e, "[]")); err == nil {
		return true
	}
	_, err := netip.ParsePrefix(e)
	return err == nil
}

func (g *Guard) allowedHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	for _, h := range g.AllowedHosts {
		if strings.TrimSuffix(strings.ToLower(strings.Trim(strings.TrimSpace(h), "[]")), ".") == host {
			return true
		}
	}
	return false
}

// allowedAddr reports whether an IP or CIDR entry covers ip.
func (g *Guard) allowedAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, h := range g.AllowedHosts {
		h = strings.Trim(strings.TrimSpace(h), "[]")
		if a, err := netip.ParseAddr(h); err == nil && a.Unmap() == ip {
			return true
		}
		if p, err := netip.ParsePrefix(h); err == nil && p.Contains(ip) {
			return true
		}
	}
	return false
}

// allowedAddrPort reports whether an IP or CIDR entry covers ip, or an IP:port entry names ip and
// port ("" matches no IP:port entry).
func (g *Guard) allowedAddrPort(ip netip.Addr, port string) bool {
	if g.allowedAddr(ip) {
		return true
	}
	ip = ip.Unmap()
	for _, h := range g.AllowedHosts {
		if ap, err := netip.ParseAddrPort(strings.TrimSpace(h)); err == nil && ap.Addr().Unmap() == ip && port != "" && strconv.Itoa(int(ap.Port())) == port {
			return true
		}
	}
	return false
}

func (g *Guard) hint() string {
	if g.Hint != "" {
		return g.Hint
	}
	return "an admin may allow this host"
}

// CheckURL validates a URL before it is saved or used: https (or http with AllowHTTP), a host, no
// credentials in it, and a literal IP only when it is public or allowed. Host names are checked again
// after resolution, when dialing.
func (g *Guard) CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, &BlockedError{Target: raw, Reason: "not a URL"}
	}
	if u.Scheme != "https" && !(g.AllowHTTP && u.Scheme == "http") {
		if g.AllowHTTP {
			return nil, &BlockedError{Target: u.Redacted(), Reason: "only http and https URLs are allowed"}
		}
		return nil, &BlockedError{Target: u.Redacted(), Reason: "only https URLs are allowed"}
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, &BlockedError{Target: u.Redacted(), Reason: "the URL has no host"}
	}
	if u.User != nil {
		return nil, &BlockedError{Target: u.Redacted(), Reason: "credentials in the URL are not allowed"}
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if err := g.checkHost(u.Hostname(), port); err != nil {
		return nil, err
	}
	return u, nil
}

// Allows reports whether host is allowlisted by name, or is a literal IP an entry covers.
func (g *Guard) Allows(host string) bool {
	if g.allowedHost(host) {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && g.allowedAddr(ip)
}

// CheckHost refuses a literal non-public IP and localhost unless allowed (SMTP hosts, URL hosts).
// IP:port entries do not apply: the port is not known here.
func (g *Guard) CheckHost(host string) error { return g.checkHost(host, "") }

// checkHost is CheckHost for a connection to port ("": unknown).
func (g *Guard) checkHost(host, port string) error {
	if g.allowedHost(host) {
		return nil
	}
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil && !PublicAddr(ip) && !g.allowedAddrPort(ip, port) {
		return &BlockedError{Target: host, Reason: "the address is not public (loopback, private, link-local or reserved); " + g.hint()}
	}
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return &BlockedError{Target: host, Reason: "localhost is not allowed; " + g.hint()}
	}
	return nil
}

// DialContext resolves host itself, refuses non-public addresses that are not allowed, and dials the
// checked address with a Control hook that checks the socket's address once more.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("egress: dial %s: %w", addr, err)
	}
	allowed := g.allowedHost(host)
	if err := g.checkHost(host, port); err != nil {
		return nil, err
	}
	ok := func(ip netip.Addr) bool { return allowed || PublicAddr(ip) || g.allowedAddrPort(ip, port) }
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		ips = []netip.Addr{ip}
	} else {
		if ips, err = g.resolver().LookupNetIP(ctx, "ip", host); err != nil {
			return nil, fmt.Errorf("egress: resolve %s: %w", host, err)
		}
	}
	d := &net.Dialer{Timeout: 10 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil || !ok(ap.Addr()) {
			return &BlockedError{Target: host + " (" + address + ")", Reason: "resolves to an address that is not public; " + g.hint()}
		}
		return nil
	}}
	var errs []error
	for _, ip := range ips {
		if !ok(ip) {
			errs = append(errs, &BlockedError{Target: host + " (" + ip.String() + ")", Reason: "resolves to an address that is not public; " + g.hint()})
			continue
		}
		conn, err := d.DialContext(ctx, network, net.JoinHostPort(ip.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("egress: %s has no addresses", host)
	}
	return nil, errors.Join(errs...)
}

func (g *Guard) resolver() Resolver {
	if g.Resolver != nil {
		return g.Resolver
	}
	return net.DefaultResolver
}

// Transport returns an HTTP transport whose every connection goes through the guard. It never uses a
// proxy from the environment: a proxy would dial on our behalf and bypass the address check. Build one
// per long-lived client: it owns a connection pool.
func (g *Guard) Transport() *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           g.DialContext,
		TLSClientConfig:       g.TLS,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
}

// maxRedirects bounds how many redirects a guarded client follows.
const maxRedirects = 3

// Client returns an HTTP client on a guarded transport whose redirects are checked like the first URL.
func (g *Guard) Client() *http.Client {
	timeout := g.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	return &http.Client{Transport: g.Transport(), Timeout: timeout, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("egress: more than %d redirects", maxRedirects)
		}
		_, err := g.CheckURL(req.URL.String())
		return err
	}}
}

// IsBlocked reports whether err is (or wraps) a refusal of the guard.
func IsBlocked(err error) bool {
	var be *BlockedError
	return errors.As(err, &be)
}
