package ui

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leadgate/leadgate/internal/testkit"
	"github.com/leadgate/leadgate/views"
)

// The login throttle, in memory and shared through Redis, reads the same: Max failures per key within the
// window block that key until the oldest of them ages out; other keys are free; a reset clears a key. With
// Redis, a second replica (another LoginLimiter on the same Redis) sees the first one's failures.
func TestLoginLimiter(t *testing.T) {
	t.Parallel()
	opt, err := redis.ParseURL(testkit.RedisDB(t))
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { rdb.Close() })
	cases := []struct {
		name       string
		one, other *LoginLimiter
	}{
		{"in memory", NewLoginLimiter(3, 15*time.Minute), nil},
		{"shared through redis", &LoginLimiter{Max: 3, Window: 15 * time.Minute, Redis: rdb, Prefix: "t1:", failures: map[string][]time.Time{}},
			&LoginLimiter{Max: 3, Window: 15 * time.Minute, Redis: rdb, Prefix: "t1:", failures: map[string][]time.Time{}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			l, check := tc.one, tc.one
			if tc.other != nil {
				check = tc.other // failures recorded by one replica block on the other
			}
			t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
			for i := range 3 {
				if blocked, _ := check.Blocked(ctx, t0, "ip:1", "email:a"); blocked {
					t.Fatalf("blocked after %d failures", i)
				}
				l.Fail(ctx, t0.Add(time.Duration(i)*time.Minute), "ip:1", "email:a")
			}
			blocked, wait := check.Blocked(ctx, t0.Add(3*time.Minute), "ip:1")
			if !blocked || wait != 12*time.Minute {
				t.Fatalf("after 3 failures: blocked=%v wait=%v, want true 12m (until the first failure ages out)", blocked, wait)
			}
			if blocked, _ := check.Blocked(ctx, t0.Add(3*time.Minute), "ip:2", "email:b"); blocked {
				t.Fatal("unrelated keys are blocked")
			}
			if blocked, _ := check.Blocked(ctx, t0.Add(15*time.Minute), "ip:1"); blocked {
				t.Fatal("still blocked once the oldest failure left the window")
			}
			l.Reset(ctx, "email:a")
			if blocked, _ := check.Blocked(ctx, t0.Add(3*time.Minute), "email:a"); blocked {
				t.Fatal("reset key still blocked")
			}
		})
	}
}

func TestLoginLimiterBudgetsByKeyKind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := NewLoginLimiter(2, 15*time.Minute)
	l.KindMax = map[string]int{"client": 4}
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	for range 3 {
		l.Fail(ctx, t0, "pair:x", "client:x")
	}
	if blocked, _ := l.Blocked(ctx, t0, "pair:x"); !blocked {
		t.Fatal("a pair key is not blocked at Max")
	}
	if blocked, _ := l.Blocked(ctx, t0, "client:x"); blocked {
		t.Fatal("a client key is blocked below its own budget")
	}
	l.Fail(ctx, t0, "client:x")
	if blocked, _ := l.Blocked(ctx, t0, "client:x"); !blocked {
		t.Fatal("a client key is not blocked at its budget")
	}
}

func TestAuditDiff(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		before, after string
		want          []views.DiffRow
	}{
		{"creation lists every field as added", ``, `{"name":"A","config":{"region":"US"}}`, []views.DiffRow{
			{Path: "config.region", After: `"US"`, Change: "added"},
			{Path: "name", After: `"A"`, Change: "added"},
		}},
		{"only changed paths appear", `{"name":"A","enabled":true,"n":1}`, `{"name":"B","enabled":true,"n":1}`, []views.DiffRow{
			{Path: "name", Before: `"A"`, After: `"B"`, Change: "changed"},
		}},
		{"removed map entries and emptied maps", `{"stages":{"x":"S1"}}`, `{"stages":{}}`, []views.DiffRow{
			{Path: "stages", After: "{}", Change: "added"},
			{Path: "stages.x", Before: `"S1"`, Change: "removed"},
		}},
		{"arrays by index", `{"keys":["a"]}`, `{"keys":["a","b"]}`, []views.DiffRow{
			{Path: "keys.1", After: `"b"`, Change: "added"},
		}},
		{"null values", `null`, `{"until":null}`, []views.DiffRow{
			{Path: "until", After: "null", Change: "added"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := auditDiff(json.RawMessage(tc.before), json.RawMessage(tc.after))
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("diff\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestPrettyJSON(t *testing.T) {
	t.Parallel()
	if got := prettyJSON(json.RawMessage(`{"a":[1,2]}`)); got != "{\n  \"a\": [\n    1,\n    2\n  ]\n}" {
		t.Fatalf("pretty %q", got)
	}
	for _, empty := range []string{"", "null", "{}", "  "} {
		if got := prettyJSON(json.RawMessage(empty)); got != "" {
			t.Fatalf("prettyJSON(%q) = %q, want empty", empty, got)
		}
	}
}
