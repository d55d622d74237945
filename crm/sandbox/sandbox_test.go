package sandbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/ratelimit"
	"github.com/leadgate/leadgate/crm/sandbox"
	"github.com/leadgate/leadgate/internal/testkit"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/models/modelstest"
)

func newSandbox(t *testing.T, opts sandbox.Options) (*sandbox.Sandbox, *models.Store) {
	t.Helper()
	ctx := context.Background()
	store := modelstest.Store(t)
	d := models.Destination{WorkspaceID: 1, Name: "Sandbox", Kind: "sandbox", BatchSize: 20, Enabled: true}
	if err := store.DestinationCreate(ctx, &d); err != nil {
		t.Fatal(err)
	}
	return sandbox.New(store.DB(), d.ID, opts), store
}

func TestSandboxUpsertBehavesLikeACRM(t *testing.T) {
	sb, _ := newSandbox(t, sandbox.Options{})
	ctx := context.Background()
	jane := crm.Contact{LeadgateID: "c1", Version: 1, Email: "jane@example.com", Phone: "+14155550134", FirstName: "Jane",
		Stage: "Discovered", Fields: map[string]string{"budget": "10k"}, FirstTouch: map[string]string{"utm_source": "ads"}, Tags: []string{"webinar"}}

	r := sb.Upsert(ctx, []crm.Contact{jane})[0]
	if r.Err != nil || !r.Created || r.RemoteID == "" || r.Calls != 1 {
		t.Fatalf("create: %+v", r)
	}
	rec, _ := sb.Contact(ctx, r.RemoteID)
	if rec.Stage != "Discovered" || rec.Fields["budget"] != "10k" || rec.Fields["first_utm_source"] != "ads" || rec.Fields[crm.DefaultLoopField] != crm.LoopValue {
		t.Fatalf("record after create: %+v", rec)
	}

	// Found again by email (no remote id): updated, not duplicated; first touch never overwritten.
	jane.Version, jane.Stage, jane.Previous = 2, "SQL", r.Written
	jane.FirstTouch = map[string]string{"utm_source": "email"}
	r2 := sb.Upsert(ctx, []crm.Contact{jane})[0]
	if r2.Err != nil || r2.Created || r2.RemoteID != r.RemoteID {
		t.Fatalf("update by email: %+v", r2)
	}
	rec, _ = sb.Contact(ctx, r.RemoteID)
	if rec.Stage != "SQL" || rec.Fields["first_utm_source"] != "ads" {
		t.Errorf("after update: stage %q first touch %q; want SQL, ads", rec.Stage, rec.Fields["first_utm_source"])
	}

	// A human edit since our last write is kept and reported.
	if err := sb.HumanEdit(ctx, r.RemoteID, "budget", "50k"); err != nil {
		t.Fatal(err)
	}
	jane.Version, jane.RemoteID, jane.Previous = 3, r.RemoteID, r2.Written
	jane.Fields = map[string]string{"budget": "12k"}
	r3 := sb.Upsert(ctx, []crm.Contact{jane})[0]
	rec, _ = sb.Contact(ctx, r.RemoteID)
	if rec.Fields["budget"] != "50k" || len(r3.Conflicts) != 1 || r3.Conflicts[0] != (crm.FieldConflict{Field: "budget", OurLast: "10k", Remote: "50k"}) {
		t.Errorf("human edit: budget %q conflicts %+v; want 50k kept and one conflict", rec.Fields["budget"], r3.Conflicts)
	}
	// An empty desired value never erases.
	jane.Version, jane.Phone, jane.Previous = 4, "", r3.Written
	sb.Upsert(ctx, []crm.Contact{jane})
	rec, _ = sb.Contact(ctx, r.RemoteID)
	if rec.Phone == nil || *rec.Phone != "+14155550134" {
		t.Errorf("phone %v, want kept", rec.Phone)
	}
}

func TestSandboxOwnRateLimitAndInjectedFaults(t *testing.T) {
	tests := []struct {
		name  string
		opts  sandbox.Options
		calls int
		want  map[crm.Class]int
	}{
		{"own rate limit answers 429 above it", sandbox.Options{RateLimit: 3}, 5, map[crm.Class]int{crm.RateLimited: 2}},
		{"all 503", sandbox.Options{Fail503Rate: 1}, 3, map[crm.Class]int{crm.Transient: 3}},
		{"all 429", sandbox.Options{Fail429Rate: 1}, 2, map[crm.Class]int{crm.RateLimited: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sb, _ := newSandbox(t, tt.opts)
			got := map[crm.Class]int{}
			for i := range tt.calls {
				r := sb.Upsert(context.Background(), []crm.Contact{{LeadgateID: "c", Email: "x" + string(rune('a'+i)) + "@example.com"}})[0]
				if r.Err != nil {
					got[crm.ClassOf(r.Err)]++
					if crm.ClassOf(r.Err) == crm.RateLimited {
						if e := r.Err.(*crm.Error); e.RetryAfter <= 0 || e.RetryAfter > time.Second || e.Status != 429 {
							t.Errorf("429 without a usable Retry-After: %+v", e)
						}
					}
				}
			}
			for c, n := range tt.want {
				if got[c] != n {
					t.Errorf("%s failures = %d, want %d (all: %v)", c, got[c], n, got)
				}
			}
		})
	}
}

// Two replicas' sandboxes of one destination share its account limit through Redis, as a real CRM counts
// an account's requests wherever they come from: 3 per window in total, not 3 each (a 10 s window keeps a
// slow machine from letting the window pass mid-test).
func TestSandboxAccountLimitIsSharedByReplicas(t *testing.T) {
	_, store := newSandbox(t, sandbox.Options{})
	opt, err := redis.ParseURL(testkit.RedisDB(t))
	if err != nil {
		t.Fatal(err)
	}
	var replicas []*sandbox.Sandbox
	for range 2 {
		rdb := redis.NewClient(opt)
		t.Cleanup(func() { rdb.Close() })
		account, err := ratelimit.New(rdb, ratelimit.Config{Prefix: "test:crm-side:", Limit: 3, Window: 10 * time.Second, Margin: -1})
		if err != nil {
			t.Fatal(err)
		}
		var destID int64
		if err := store.DB().Raw(`SELECT id FROM destinations WHERE kind = 'sandbox' ORDER BY id LIMIT 1`).Scan(&destID).Error; err != nil {
			t.Fatal(err)
		}
		replicas = append(replicas, sandbox.New(store.DB(), destID, sandbox.Options{RateLimit: 3, Account: account}))
	}
	ok, limited := 0, 0
	for i := range 8 {
		r := replicas[i%2].Upsert(context.Background(), []crm.Contact{{LeadgateID: "c", Email: "r" + string(rune('a'+i)) + "@example.com"}})[0]
		switch {
		case r.Err == nil:
			ok++
		case crm.ClassOf(r.Err) == crm.RateLimited:
			limited++
		default:
			t.Fatalf("call %d: %v", i, r.Err)
		}
	}
	if ok != 3 || limited != 5 {
		t.Fatalf("8 quick calls over two replicas: %d accepted, %d answered 429; want 3 and 5", ok, limited)
	}
}
