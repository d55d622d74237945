package redisconn

import (
	"strings"
	"testing"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

func TestTheSingleServerFormIsTheContractDefault(t *testing.T) {
	tg, err := Parse("redis://:s3cret@127.0.0.1:6379/3")
	if err != nil {
		t.Fatal(err)
	}
	if tg.Kind != Server || tg.Addrs[0] != "127.0.0.1:6379" || tg.DB != 3 || tg.Password != "s3cret" || tg.TLS {
		t.Fatalf("got %+v", tg)
	}
	c := tg.Client(8)
	defer c.Close()
	if _, ok := c.(*redis.Client); !ok {
		t.Fatalf("client is %T, want *redis.Client", c)
	}
	if o, ok := tg.Asynq().(asynq.RedisClientOpt); !ok || o.Addr != "127.0.0.1:6379" || o.DB != 3 || o.Password != "s3cret" {
		t.Fatalf("asynq options %#v", tg.Asynq())
	}
	if tls, _ := Parse("rediss://redis.example.com:6380/0"); !tls.TLS {
		t.Fatal("rediss:// must mean TLS")
	}
}

func TestTheSentinelFormNamesTheMasterTheSentinelsAndBothCredentials(t *testing.T) {
	tg, err := Parse("rediss-sentinel://app:p%40ss@s1.example.com:26379,s2.example.com,[::1]:26380/2?master=mymaster&sentinel_password=s3ntinel-secret&sentinel_username=su")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"s1.example.com:26379", "s2.example.com:26379", "[::1]:26380"}
	if tg.Kind != Sentinel || strings.Join(tg.Addrs, " ") != strings.Join(want, " ") || tg.Master != "mymaster" || tg.DB != 2 ||
		tg.Username != "app" || tg.Password != "p@ss" || !tg.TLS {
		t.Fatalf("got %+v", tg)
	}
	c := tg.Client(8)
	defer c.Close()
	if _, ok := c.(*redis.Client); !ok { // NewFailoverClient returns a *redis.Client that asks the sentinels
		t.Fatalf("client is %T", c)
	}
	o, ok := tg.Asynq().(asynq.RedisFailoverClientOpt)
	if !ok || o.MasterName != "mymaster" || len(o.SentinelAddrs) != 3 || o.SentinelPassword != "s3ntinel-secret" || o.SentinelUsername != "su" ||
		o.Password != "p@ss" || o.DB != 2 || o.TLSConfig == nil {
		t.Fatalf("asynq options %#v", tg.Asynq())
	}
	if s := tg.String(); strings.Contains(s, "p@ss") || strings.Contains(s, "s3ntinel-secret") {
		t.Fatalf("String leaks credentials: %s", s)
	}
}

func TestTheClusterFormTakesSeedNodes(t *testing.T) {
	tg, err := Parse("redis-cluster://:pw@10.0.0.1:7000,10.0.0.2:7001,10.0.0.3")
	if err != nil {
		t.Fatal(err)
	}
	if tg.Kind != Cluster || len(tg.Addrs) != 3 || tg.Addrs[2] != "10.0.0.3:6379" || tg.Password != "pw" || tg.TLS {
		t.Fatalf("got %+v", tg)
	}
	c := tg.Client(8)
	defer c.Close()
	if _, ok := c.(*redis.ClusterClient); !ok {
		t.Fatalf("client is %T, want *redis.ClusterClient", c)
	}
	if o, ok := tg.Asynq().(asynq.RedisClusterClientOpt); !ok || len(o.Addrs) != 3 || o.Password != "pw" {
		t.Fatalf("asynq options %#v", tg.Asynq())
	}
}

func TestBadURLsAreRefusedWithTheReason(t *testing.T) {
	for raw, want := range map[string]string{
		"":                                      "not a URL",
		"mysql://x":                             "scheme",
		"redis-sentinel://s1:26379/0":           "master=",
		"redis-sentinel:///0?master=m":          "no address",
		"redis-sentinel://s1:99999/0?master=m":  "port",
		"redis-sentinel://s1/x?master=m":        "not a number",
		"redis-sentinel://s1/0?master=m&pool=1": "unknown parameter",
		"redis-cluster://n1:7000/1":             "only database 0",
		"redis-cluster://n1:7000?master=m":      "unknown parameter",
		"redis-cluster://:7000":                 "no host",
		"redis-cluster://n1:7000,[::1:7001":     "not host:port",
		"redis://127.0.0.1:6379/notanumber":     "invalid database",
	} {
		_, err := Parse(raw)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error saying %q", raw, err, want)
		}
	}
}

// FuzzParse: any string is either refused or parsed into a target with at least one address whose
// client can be built.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"redis://127.0.0.1:6379/0", "redis-sentinel://a,b:1/0?master=m", "rediss-cluster://u:p@h:1,h2",
		"redis-sentinel://@/?master=", "redis-cluster://,,,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		tg, err := Parse(raw)
		if err != nil {
			return
		}
		if len(tg.Addrs) == 0 || tg.Kind == "" {
			t.Fatalf("Parse(%q) = %+v without an address", raw, tg)
		}
		if tg.Kind == Sentinel && tg.Master == "" {
			t.Fatalf("Parse(%q): a sentinel target without a master", raw)
		}
		_ = tg.Asynq()
		_ = tg.String()
	})
}
