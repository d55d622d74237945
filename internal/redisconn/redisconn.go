// Package redisconn reads LEADGATE_REDIS_URL in its three forms and builds from one parsed value both
// the go-redis client every component shares and the connection options asynq's scheduler takes, so
// the two never disagree about where Redis is:
//
//	redis://[user:password@]host:port/db            one server (rediss:// for TLS)
//	redis-sentinel://[user:password@]s1:26379,s2:26379,s3:26379/db?master=NAME
//	                                                 Sentinel: the master's name and sentinel addresses
//	                                                 (rediss-sentinel:// for TLS to sentinels and servers);
//	                                                 sentinel_username / sentinel_password when the
//	                                                 sentinels require their own credentials
//	redis-cluster://[user:password@]n1:6379,n2:6379,n3:6379
//	                                                 Cluster: any seed nodes (rediss-cluster:// for TLS)
//
// The user and password in the URL are those of the Redis servers (the master and replicas, or the
// cluster nodes). TLS verifies the servers against the system's roots (SSL_CERT_FILE or SSL_CERT_DIR add
// a private CA).
package redisconn

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// Kind is the deployment a URL names.
type Kind string

const (
	Server   Kind = "server"
	Sentinel Kind = "sentinel"
	Cluster  Kind = "cluster"
)

// Target is a parsed LEADGATE_REDIS_URL.
type Target struct {
	Kind      Kind
	Addrs     []string // the server, the sentinels or the cluster seed nodes
	Master    string   // Sentinel: the monitored master's name
	DB        int      // not with Cluster (a cluster has only DB 0)
	Username  string
	Password  string
	TLS       bool
	sentUser  string
	sentPass  string
	serverOpt *redis.Options // Server: everything redis.ParseURL understood (timeouts, pool sizes)
}

// Parse reads raw in one of the package's forms.
func Parse(raw string) (Target, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return Target{}, errors.New("not a URL (scheme://...)")
	}
	switch scheme {
	case "redis", "rediss":
		opt, err := redis.ParseURL(raw)
		if err != nil {
			return Target{}, err
		}
		return Target{Kind: Server, Addrs: []string{opt.Addr}, DB: opt.DB, Username: opt.Username, Password: opt.Password,
			TLS: opt.TLSConfig != nil, serverOpt: opt}, nil
	case "redis-sentinel", "rediss-sentinel":
		return parseMulti(scheme, rest, Sentinel, "26379")
	case "redis-cluster", "rediss-cluster":
		return parseMulti(scheme, rest, Cluster, "6379")
	}
	return Target{}, fmt.Errorf("scheme %q: use redis://, rediss://, redis-sentinel://, rediss-sentinel://, redis-cluster:// or rediss-cluster://", scheme)
}

// parseMulti reads the Sentinel and Cluster forms (rest is what follows "scheme://"): a comma-separated
// host list, the servers' credentials, and for Sentinel a DB path and the master's name. The host list
// is split by hand: net/url takes one host only.
func parseMulti(scheme, rest string, kind Kind, defaultPort string) (Target, error) {
	authority, tail := rest, ""
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority, tail = rest[:i], rest[i:]
	}
	userinfo, hosts := "", authority
	if i := strings.LastIndex(authority, "@"); i >= 0 {
		userinfo, hosts = authority[:i+1], authority[i+1:]
	}
	// The single placeholder host lets net/url decode the credentials, the path and the query.
	u, err := url.Parse(scheme + "://" + userinfo + "host" + tail)
	if err != nil {
		return Target{}, fmt.Errorf("not a URL: %w", err)
	}
	t := Target{Kind: kind, TLS: strings.HasPrefix(scheme, "rediss")}
	if u.User != nil {
		t.Username = u.User.Username()
		t.Password, _ = u.User.Password()
	}
	for h := range strings.SplitSeq(hosts, ",") {
		if h = strings.TrimSpace(h); h == "" {
			continue
		}
		host, port, err := net.SplitHostPort(h)
		if err != nil { // no port: a bare host name, IPv4 address or [IPv6] address
			switch {
			case strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]"):
				host = h[1 : len(h)-1]
			case !strings.Contains(h, ":"):
				host = h
			default:
				return Target{}, fmt.Errorf("%s address %q is not host:port", kind, h)
			}
			port = defaultPort
		}
		if host == "" {
			return Target{}, fmt.Errorf("%s address %q has no host", kind, h)
		}
		if strings.ContainsAny(host, "[]@/") {
			return Target{}, fmt.Errorf("%s address %q is not host:port", kind, h)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return Target{}, fmt.Errorf("%s address %q: port %q is not a port number", kind, h, port)
		}
		t.Addrs = append(t.Addrs, net.JoinHostPort(host, port))
	}
	if len(t.Addrs) == 0 {
		return Target{}, fmt.Errorf("%s URL names no address", kind)
	}
	if path := strings.Trim(u.Path, "/"); path != "" {
		db, err := strconv.Atoi(path)
		if err != nil || db < 0 {
			return Target{}, fmt.Errorf("database %q is not a number", path)
		}
		if kind == Cluster && db != 0 {
			return Target{}, errors.New("a Redis Cluster has only database 0")
		}
		t.DB = db
	}
	q := u.Query()
	var known []string
	if kind == Sentinel {
		known = []string{"master", "sentinel_username", "sentinel_password"}
		t.Master, t.sentUser, t.sentPass = q.Get("master"), q.Get("sentinel_username"), q.Get("sentinel_password")
		if t.Master == "" {
			return Target{}, errors.New("a Sentinel URL needs ?master=NAME (the name the sentinels monitor)")
		}
	}
	for k := range q {
		if !slices.Contains(known, k) {
			return Target{}, fmt.Errorf("unknown parameter %q", k)
		}
	}
	return t, nil
}

// tlsConfig is nil without TLS; the server name is taken from each address as it is dialled.
func (t Target) tlsConfig() *tls.Config {
	if !t.TLS {
		return nil
	}
	return &tls.Config{MinVersion: tls.VersionTLS12}
}

// Client returns the go-redis client for the target, with poolSize connections per server. With
// Sentinel it follows the master the sentinels name, across failovers; with Cluster it routes each
// key to its slot's node.
func (t Target) Client(poolSize int) redis.UniversalClient {
	switch t.Kind {
	case Sentinel:
		return redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName: t.Master, SentinelAddrs: t.Addrs, SentinelUsername: t.sentUser, SentinelPassword: t.sentPass,
			Username: t.Username, Password: t.Password, DB: t.DB, PoolSize: poolSize, TLSConfig: t.tlsConfig(),
		})
	case Cluster:
		return redis.NewClusterClient(&redis.ClusterOptions{
			Addrs: t.Addrs, Username: t.Username, Password: t.Password, PoolSize: poolSize, TLSConfig: t.tlsConfig(),
		})
	}
	opt := *t.serverOpt
	if poolSize > 0 {
		opt.PoolSize = poolSize
	}
	return redis.NewClient(&opt)
}

// Asynq returns asynq's connection options for the same target (the scheduler makes its own client).
func (t Target) Asynq() asynq.RedisConnOpt {
	switch t.Kind {
	case Sentinel:
		return asynq.RedisFailoverClientOpt{MasterName: t.Master, SentinelAddrs: t.Addrs, SentinelUsername: t.sentUser,
			SentinelPassword: t.sentPass, Username: t.Username, Password: t.Password, DB: t.DB, TLSConfig: t.tlsConfig()}
	case Cluster:
		return asynq.RedisClusterClientOpt{Addrs: t.Addrs, Username: t.Username, Password: t.Password, TLSConfig: t.tlsConfig()}
	}
	o := t.serverOpt
	return asynq.RedisClientOpt{Network: o.Network, Addr: o.Addr, Username: o.Username, Password: o.Password, DB: o.DB,
		DialTimeout: o.DialTimeout, ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout, TLSConfig: o.TLSConfig}
}

// String describes the target without its credentials, for logs.
func (t Target) String() string {
	s := string(t.Kind) + " " + strings.Join(t.Addrs, ",")
	if t.Kind == Sentinel {
		s += " master " + t.Master
	}
	if t.TLS {
		s += " (TLS)"
	}
	return s
}
