package config

import (
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestDefaultsFollowTheContract(t *testing.T) {
	c, err := FromEnv(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{DatabaseURL: "postgres://localhost:5432/leadgate?sslmode=disable", RedisURL: "redis://127.0.0.1:6379/0", Addr: ":8080",
		PublicURL: "http://localhost:8080", SpoolDir: "data/spool", MaxBodyBytes: 1 << 20, IdempotencyWindow: time.Hour, WorkerConcurrency: 10}
	if c.DatabaseURL != want.DatabaseURL || c.RedisURL != want.RedisURL || c.Addr != want.Addr || c.PublicURL != want.PublicURL ||
		c.SpoolDir != want.SpoolDir || c.MaxBodyBytes != want.MaxBodyBytes || c.IdempotencyWindow != want.IdempotencyWindow ||
		c.WorkerConcurrency != want.WorkerConcurrency {
		t.Fatalf("defaults = %+v", c)
	}
	if !c.DevSecret || c.SecretKey != DevSecretKey {
		t.Fatal("without LEADGATE_SECRET_KEY the dev key must be used and flagged")
	}
}

func TestEveryProblemIsReportedAtOnce(t *testing.T) {
	_, err := FromEnv(env(map[string]string{
		"LEADGATE_DATABASE_URL":          "mysql://x",
		"LEADGATE_REDIS_URL":             "::",
		"LEADGATE_PUBLIC_URL":            "ftp://x",
		"LEADGATE_SECRET_KEY":            "short",
		"LEADGATE_MAX_BODY_BYTES":        "lots",
		"LEADGATE_WORKER_CONCURRENCY":    "0",
		"LEADGATE_IDEMPOTENCY_WINDOW":    "-1h",
		"LEADGATE_RETENTION_IDEMPOTENCY": "1h",
		"LEADGATE_LOG_LEVEL":             "loud",
	}))
	if err == nil {
		t.Fatal("bad configuration accepted")
	}
	for _, name := range []string{"LEADGATE_DATABASE_URL", "LEADGATE_REDIS_URL", "LEADGATE_PUBLIC_URL", "LEADGATE_SECRET_KEY",
		"LEADGATE_MAX_BODY_BYTES", "LEADGATE_WORKER_CONCURRENCY", "LEADGATE_IDEMPOTENCY_WINDOW", "LEADGATE_RETENTION_IDEMPOTENCY", "LEADGATE_LOG_LEVEL"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error does not name %s:\n%v", name, err)
		}
	}
}

func TestSpoolCanBeTurnedOffAndHTTPSMakesCookiesSecure(t *testing.T) {
	c, err := FromEnv(env(map[string]string{"LEADGATE_SPOOL_DIR": "off", "LEADGATE_PUBLIC_URL": "https://leads.example.com/",
		"LEADGATE_SECRET_KEY": "0123456789abcdef0123"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.SpoolDir != "" || !c.SecureCookies || c.PublicURL != "https://leads.example.com" || c.DevSecret {
		t.Fatalf("got %+v", c)
	}
}

func TestFailpointsAndLeases(t *testing.T) {
	c, err := FromEnv(env(map[string]string{"LEADGATE_FAILPOINTS": "sync.after_crm_accept, apply.before_commit",
		"LEADGATE_FAILPOINT_DIR": "/tmp/fp", "LEADGATE_SYNC_LEASE": "3s", "LEADGATE_SIDE_EFFECT_LEASE": "4s"}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.Failpoints, ",") != "sync.after_crm_accept,apply.before_commit" || c.FailpointDir != "/tmp/fp" ||
		c.SyncLease != 3*time.Second || c.SideEffectLease != 4*time.Second {
		t.Fatalf("got failpoints %v in %q, leases %s/%s", c.Failpoints, c.FailpointDir, c.SyncLease, c.SideEffectLease)
	}
	_, err = FromEnv(env(map[string]string{"LEADGATE_FAILPOINTS": "sync.after_crm_accept,nope", "LEADGATE_SYNC_LEASE": "soon"}))
	for _, want := range []string{"LEADGATE_FAILPOINTS", `"nope"`, "LEADGATE_FAILPOINT_DIR", "LEADGATE_SYNC_LEASE"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %s", err, want)
		}
	}
}

// LEADGATE_EGRESS_ALLOWED_HOSTS lists host names, IPs and CIDRs (comma- or space-separated); by default
// nothing private is allowed.
func TestEgressAllowedHosts(t *testing.T) {
	if c, err := FromEnv(env(nil)); err != nil || len(c.EgressAllowedHosts) != 0 {
		t.Fatalf("default %v (%v), want none allowed", c.EgressAllowedHosts, err)
	}
	c, err := FromEnv(env(map[string]string{"LEADGATE_EGRESS_ALLOWED_HOSTS": "127.0.0.1, crm.internal 10.0.0.0/8"}))
	if err != nil || strings.Join(c.EgressAllowedHosts, "|") != "127.0.0.1|crm.internal|10.0.0.0/8" {
		t.Fatalf("parsed %q (%v)", c.EgressAllowedHosts, err)
	}
	if _, err := FromEnv(env(map[string]string{"LEADGATE_EGRESS_ALLOWED_HOSTS": "http://crm.internal"})); err == nil ||
		!strings.Contains(err.Error(), "LEADGATE_EGRESS_ALLOWED_HOSTS") {
		t.Fatalf("a URL entry: err %v, want one naming the setting", err)
	}
}

func TestTheProfilerListensOnLoopbackOnly(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"", true},
		{"127.0.0.1:6060", true},
		{"[::1]:6060", true},
		{"localhost:6060", true},
		{":6060", false},
		{"0.0.0.0:6060", false},
		{"10.0.0.5:6060", false},
		{"127.0.0.1", false},
		{"127.0.0.1:http-alt", false},
	} {
		c, err := FromEnv(env(map[string]string{"LEADGATE_DEBUG_ADDR": tc.addr}))
		if tc.ok && (err != nil || c.DebugAddr != tc.addr) {
			t.Errorf("%q refused: %v", tc.addr, err)
		}
		if !tc.ok && (err == nil || !strings.Contains(err.Error(), "LEADGATE_DEBUG_ADDR")) {
			t.Errorf("%q accepted (err %v)", tc.addr, err)
		}
	}
}

// LEADGATE_REDIS_URL takes the single-server, Sentinel and Cluster forms; LEADGATE_DATABASE_URL takes
// several hosts (pgx's failover form).
func TestRedisSentinelAndClusterFormsAndAMultiHostDatabaseURLAreAccepted(t *testing.T) {
	for _, redisURL := range []string{"redis://127.0.0.1:6379/0", "rediss://:pw@redis.example.com:6380/1",
		"redis-sentinel://:pw@10.0.0.1:26379,10.0.0.2:26379,10.0.0.3:26379/0?master=leadgate",
		"rediss-sentinel://s1,s2,s3/0?master=leadgate&sentinel_password=x",
		"redis-cluster://10.0.0.1:6379,10.0.0.2:6379,10.0.0.3:6379"} {
		c, err := FromEnv(env(map[string]string{"LEADGATE_REDIS_URL": redisURL,
			"LEADGATE_DATABASE_URL": "postgres://leadgate@pg1:5432,pg2:5432/leadgate?target_session_attrs=read-write&connect_timeout=3"}))
		if err != nil || c.RedisURL != redisURL {
			t.Errorf("%s: %v", redisURL, err)
		}
	}
	_, err := FromEnv(env(map[string]string{"LEADGATE_REDIS_URL": "redis-sentinel://s1:26379/0", "LEADGATE_DATABASE_URL": "postgres://h/db?target_session_attrs=sometimes"}))
	for _, want := range []string{"LEADGATE_REDIS_URL", "master=", "LEADGATE_DATABASE_URL", "target_session_attrs"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %s", err, want)
		}
	}
}

func TestDrainDelayIsOffByDefaultAndMustBeADuration(t *testing.T) {
	c, err := FromEnv(env(map[string]string{"LEADGATE_DRAIN_DELAY": "5s"}))
	if err != nil || c.DrainDelay != 5*time.Second {
		t.Fatalf("drain delay %s, %v", c.DrainDelay, err)
	}
	if c, _ := FromEnv(env(nil)); c.DrainDelay != 0 {
		t.Fatalf("default drain delay %s, want 0", c.DrainDelay)
	}
	if _, err := FromEnv(env(map[string]string{"LEADGATE_DRAIN_DELAY": "soon"})); err == nil || !strings.Contains(err.Error(), "LEADGATE_DRAIN_DELAY") {
		t.Fatalf("bad drain delay: %v", err)
	}
}

func TestTrustedProxiesAreIPsOrCIDRs(t *testing.T) {
	if c, err := FromEnv(env(nil)); err != nil || len(c.TrustedProxies) != 0 {
		t.Fatalf("default %v (%v), want no trusted proxy", c.TrustedProxies, err)
	}
	c, err := FromEnv(env(map[string]string{"LEADGATE_TRUSTED_PROXIES": "10.0.0.5, 172.16.0.0/12 ::1"}))
	if err != nil || strings.Join(c.TrustedProxies, "|") != "10.0.0.5|172.16.0.0/12|::1" {
		t.Fatalf("parsed %q (%v)", c.TrustedProxies, err)
	}
	if _, err := FromEnv(env(map[string]string{"LEADGATE_TRUSTED_PROXIES": "proxy.internal"})); err == nil ||
		!strings.Contains(err.Error(), "LEADGATE_TRUSTED_PROXIES") {
		t.Fatalf("a host name: err %v, want one naming the setting", err)
	}
}
