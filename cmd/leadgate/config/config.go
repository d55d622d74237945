// Package config reads leadgate's typed configuration from the environment once,
// validates it, and hands it to everything else explicitly.
package config

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/leadgate/leadgate/internal/egress"
	"github.com/leadgate/leadgate/internal/failpoint"
	"github.com/leadgate/leadgate/internal/redisconn"
)

// DevSecretKey is used when LEADGATE_SECRET_KEY is unset; start-up warns loudly.
const DevSecretKey = "leadgate-dev-secret-key-do-not-use-in-production"

// Config is the whole runtime configuration. Defaults follow CONTRACT.md.
type Config struct {
	DatabaseURL string // LEADGATE_DATABASE_URL
	RedisURL    string // LEADGATE_REDIS_URL
	Addr        string // LEADGATE_ADDR
	// DebugAddr serves Go's profiler (net/http/pprof) on its own listener; empty: off. Only loopback
	// addresses are accepted: profiles reveal payload contents in memory.
	DebugAddr string // LEADGATE_DEBUG_ADDR
	SecretKey string // LEADGATE_SECRET_KEY (or LEADGATE_SECRET_KEY_FILE)
	PublicURL string // LEADGATE_PUBLIC_URL
	// SpoolDir holds fsynced deliveries while Postgres is down; "off" disables it.
	SpoolDir string // LEADGATE_SPOOL_DIR [data/spool]
	// MaxBodyBytes caps a webhook body (413 beyond it).
	MaxBodyBytes int64 // LEADGATE_MAX_BODY_BYTES [1 MiB]
	// IdempotencyWindow is the sliding window for content-hash keys of senders without a delivery id.
	IdempotencyWindow time.Duration // LEADGATE_IDEMPOTENCY_WINDOW [1h]
	// WorkerConcurrency is the number of asynq workers in this process.
	WorkerConcurrency int // LEADGATE_WORKER_CONCURRENCY [10]
	// RetentionIdempotency keeps idempotency records at least this long (min 7 days).
	RetentionIdempotency time.Duration // LEADGATE_RETENTION_IDEMPOTENCY [720h]
	// RetentionPayloads drops raw payloads of resolved events after this long.
	RetentionPayloads time.Duration // LEADGATE_RETENTION_PAYLOADS [2160h]
	// SecureCookies marks session cookies Secure (on when PublicURL is https).
	SecureCookies bool
	// DevSecret is true when the built-in development secret key is in use.
	DevSecret bool
	LogLevel  slog.Level // LEADGATE_LOG_LEVEL [info]
	// Failpoints are the points where this process SIGKILLs itself the first time it reaches them
	// (failure-boundary tests; see internal/failpoint). Never set in production.
	Failpoints   []string // LEADGATE_FAILPOINTS (comma-separated)
	FailpointDir string   // LEADGATE_FAILPOINT_DIR: marker files of fired points; required with failpoints
	// SyncLease and SideEffectLease override how long a claimed CRM batch and a claimed side effect stay
	// claimed (0: the relays' defaults, 30 s and 2 min); a crash mid-send is retried after the lease.
	SyncLease       time.Duration // LEADGATE_SYNC_LEASE
	SideEffectLease time.Duration // LEADGATE_SIDE_EFFECT_LEASE
	// DrainDelay is how long a web process keeps answering after SIGTERM while /readyz already says
	// "draining", so that a load balancer stops sending it deliveries before its listener closes (0: close
	// at once, the single-binary default).
	DrainDelay time.Duration // LEADGATE_DRAIN_DELAY
	// EgressAllowedHosts are host names, IPs and CIDRs outbound requests to configured URLs (CRM
	// destinations, hydration providers, the side-effect webhook, alert channels) may reach even when
	// they are not public; everything else on loopback, private, link-local or metadata addresses is refused.
	EgressAllowedHosts []string // LEADGATE_EGRESS_ALLOWED_HOSTS (comma- or space-separated)
	// TrustedProxies are the IPs and CIDRs of the reverse proxies in front of leadgate: only from them
	// is X-Forwarded-For believed (the sign-in throttle counts per client). Empty: the TCP peer is the client.
	TrustedProxies []string // LEADGATE_TRUSTED_PROXIES (comma- or space-separated)
}

// FromEnv reads the environment through getenv (os.Getenv in production) and
// validates the result, returning every problem at once.
func FromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		DatabaseURL: cmp.Or(getenv("LEADGATE_DATABASE_URL"), "postgres://localhost:5432/leadgate?sslmode=disable"),
		RedisURL:    cmp.Or(getenv("LEADGATE_REDIS_URL"), "redis://127.0.0.1:6379/0"),
		Addr:        cmp.Or(getenv("LEADGATE_ADDR"), ":8080"),
		SecretKey:   getenv("LEADGATE_SECRET_KEY"),
		PublicURL:   strings.TrimRight(cmp.Or(getenv("LEADGATE_PUBLIC_URL"), "http://localhost:8080"), "/"),
		SpoolDir:    cmp.Or(getenv("LEADGATE_SPOOL_DIR"), "data/spool"),
		DebugAddr:   getenv("LEADGATE_DEBUG_ADDR"),
	}
	var errs []error
	if f := getenv("LEADGATE_SECRET_KEY_FILE"); f != "" && c.SecretKey == "" {
		b, err := os.ReadFile(f)
		if err != nil {
			errs = append(errs, fmt.Errorf("LEADGATE_SECRET_KEY_FILE: %w", err))
		}
		c.SecretKey = strings.TrimSpace(string(b))
	}
	if c.SecretKey == "" {
		c.SecretKey, c.DevSecret = DevSecretKey, true
	} else if len(c.SecretKey) < 16 {
		errs = append(errs, errors.New("LEADGATE_SECRET_KEY: must be at least 16 characters"))
	}
	if strings.EqualFold(c.SpoolDir, "off") {
		c.SpoolDir = ""
	}
	errs = append(errs, wrapErr("LEADGATE_DATABASE_URL", checkDatabaseURL(c.DatabaseURL)))
	if _, err := redisconn.Parse(c.RedisURL); err != nil {
		errs = append(errs, fmt.Errorf("LEADGATE_REDIS_URL: %w", err))
	}
	errs = append(errs, checkURL("LEADGATE_PUBLIC_URL", c.PublicURL, "http", "https"))
	c.SecureCookies = strings.HasPrefix(c.PublicURL, "https://")
	errs = append(errs, wrapErr("LEADGATE_DEBUG_ADDR", checkLoopback(c.DebugAddr)))

	var err error
	c.MaxBodyBytes, err = intVar(getenv, "LEADGATE_MAX_BODY_BYTES", 1<<20, 1024, 64<<20)
	errs = append(errs, err)
	workers, err := intVar(getenv, "LEADGATE_WORKER_CONCURRENCY", 10, 1, 1000)
	c.WorkerConcurrency = int(workers)
	errs = append(errs, err)
	c.IdempotencyWindow, err = durationVar(getenv, "LEADGATE_IDEMPOTENCY_WINDOW", time.Hour)
	errs = append(errs, err)
	c.RetentionIdempotency, err = durationVar(getenv, "LEADGATE_RETENTION_IDEMPOTENCY", 30*24*time.Hour)
	errs = append(errs, err)
	if c.RetentionIdempotency < 7*24*time.Hour {
		errs = append(errs, errors.New("LEADGATE_RETENTION_IDEMPOTENCY: must be at least 168h (senders retry for days)"))
	}
	c.RetentionPayloads, err = durationVar(getenv, "LEADGATE_RETENTION_PAYLOADS", 90*24*time.Hour)
	errs = append(errs, err)
	c.Failpoints, err = failpoint.Parse(getenv("LEADGATE_FAILPOINTS"))
	errs = append(errs, wrapErr("LEADGATE_FAILPOINTS", err))
	if c.FailpointDir = getenv("LEADGATE_FAILPOINT_DIR"); len(c.Failpoints) > 0 && c.FailpointDir == "" {
		errs = append(errs, errors.New("LEADGATE_FAILPOINT_DIR: required with LEADGATE_FAILPOINTS (where fired points are remembered)"))
	}
	if getenv("LEADGATE_SYNC_LEASE") != "" {
		c.SyncLease, err = durationVar(getenv, "LEADGATE_SYNC_LEASE", 0)
		errs = append(errs, err)
	}
	if getenv("LEADGATE_DRAIN_DELAY") != "" {
		c.DrainDelay, err = durationVar(getenv, "LEADGATE_DRAIN_DELAY", 0)
		errs = append(errs, err)
	}
	if getenv("LEADGATE_SIDE_EFFECT_LEASE") != "" {
		c.SideEffectLease, err = durationVar(getenv, "LEADGATE_SIDE_EFFECT_LEASE", 0)
		errs = append(errs, err)
	}
	c.EgressAllowedHosts = strings.FieldsFunc(getenv(egress.AllowSetting), func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
	for _, h := range c.EgressAllowedHosts {
		errs = append(errs, wrapErr(egress.AllowSetting, egress.ValidEntry(h)))
	}
	c.TrustedProxies = strings.FieldsFunc(getenv("LEADGATE_TRUSTED_PROXIES"), func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
	for _, p := range c.TrustedProxies {
		errs = append(errs, wrapErr("LEADGATE_TRUSTED_PROXIES", checkProxy(p)))
	}
	if lvl := getenv("LEADGATE_LOG_LEVEL"); lvl != "" {
		if err := c.LogLevel.UnmarshalText([]byte(lvl)); err != nil {
			errs = append(errs, fmt.Errorf("LEADGATE_LOG_LEVEL: %w", err))
		}
	}
	return c, errors.Join(errs...)
}

// checkProxy accepts an IP address or a CIDR prefix.
func checkProxy(p string) error {
	if _, err := netip.ParseAddr(p); err == nil {
		return nil
	}
	if _, err := netip.ParsePrefix(p); err == nil {
		return nil
	}
	return fmt.Errorf("%q is not an IP address or CIDR", p)
}

func wrapErr(name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", name, err)
}

// checkDatabaseURL accepts what pgx accepts (a URL or key=value DSN, several hosts for failover) but
// insists on a postgres URL scheme or a DSN naming a host, so that a typo does not fall back to pgx's
// defaults silently.
func checkDatabaseURL(raw string) error {
	if !strings.HasPrefix(raw, "postgres://") && !strings.HasPrefix(raw, "postgresql://") && !strings.Contains(raw, "host=") {
		return fmt.Errorf("%q is not a postgres:// URL or a DSN with host=", raw)
	}
	if _, err := pgconn.ParseConfig(raw); err != nil {
		return err
	}
	return nil
}

func checkURL(name, raw string, schemes ...string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	for _, s := range schemes {
		if u.Scheme == s && u.Host != "" {
			return nil
		}
	}
	return fmt.Errorf("%s: %q is not a %s URL with a host", name, raw, schemes[0])
}

func intVar(getenv func(string) string, name string, def, lo, hi int64) (int64, error) {
	raw := getenv(name)
	if raw == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < lo || n > hi {
		return def, fmt.Errorf("%s: %q must be a whole number from %d to %d", name, raw, lo, hi)
	}
	return n, nil
}

func durationVar(getenv func(string) string, name string, def time.Duration) (time.Duration, error) {
	raw := getenv(name)
	if raw == "" {
		return def, nil
	}
	d, err := time.ParseDuration(raw)
	if err != nil || d <= 0 {
		return def, fmt.Errorf("%s: %q must be a positive duration such as 1h or 90m", name, raw)
	}
	return d, nil
}

// checkLoopback accepts "" or a host:port whose host is a loopback address or localhost.
func checkLoopback(addr string) error {
	if addr == "" {
		return nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q must be host:port, e.g. 127.0.0.1:6060", addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("%q: port %q is not a port number", addr, port)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%q: the profiler listens on loopback only (127.0.0.1, ::1 or localhost)", addr)
	}
	return nil
}
