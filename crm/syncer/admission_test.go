package syncer

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leadgate/leadgate/crm/ratelimit"
	"github.com/leadgate/leadgate/internal/testkit"
)

// A request whose first connection turned out dead is admitted again on its second connection. Its
// first admission is settled before it waits again: otherwise, with every slot held by its own pending
// admission (here a limit of 1), it would wait on itself until its timeout.
func TestASecondConnectionDoesNotWaitOnTheRequestsOwnAdmission(t *testing.T) {
	t.Parallel()
	opt, err := redis.ParseURL(testkit.RedisDB(t))
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { rdb.Close() })
	l, err := ratelimit.New(rdb, ratelimit.Config{Prefix: "test-readmit:", Limit: 1, Window: time.Second, InFlight: requestTimeout,
		Local: &ratelimit.Local{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	bounded, stop := context.WithTimeout(ctx, 10*time.Second) // stands in for the 30 s request timeout
	defer stop()
	adm := &admission{conn: &Conn{Limiter: l, Key: "dest:1"}, ctx: bounded, cancel: cancel}
	adm.admit(nil) // the first connection
	adm.admit(nil) // the transport retries on a second one
	if err := adm.failed(); err != nil {
		t.Fatalf("the second connection was never admitted: %v", err)
	}
	adm.settle(time.Now())
	adm.done()
}
