package syncer_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leadgate/leadgate/crm/syncer"
	"github.com/leadgate/leadgate/models"
)

// arrivals records when each request reached the CRM's handler.
type arrivals struct {
	mu    sync.Mutex
	times []time.Time
}

func (a *arrivals) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.times = append(a.times, time.Now())
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"contacts":[],"meta":{"total":"0"}}`))
}

// maxIn is the most arrivals inside any window of length w.
func (a *arrivals) maxIn(w time.Duration) int {
	a.mu.Lock()
	ts := append([]time.Time(nil), a.times...)
	a.mu.Unlock()
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
	best := 0
	for i := range ts {
		n := 0
		for j := i; j < len(ts) && ts[j].Sub(ts[i]) < w; j++ {
			n++
		}
		best = max(best, n)
	}
	return best
}

// A request is admitted once it holds a connection, not before: a slow dial (or TLS handshake) after
// admission would land a request admitted early next to ones admitted after it, and the CRM would count
// limit+1 in one of its windows.
func TestCRMRequestsAreAdmittedAfterTheConnectionIsReady(t *testing.T) {
	t.Parallel()
	env := newSyncEnv(t)
	var dials atomic.Int64
	var dialer net.Dialer
	slowFirst := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) == 1 {
			time.Sleep(time.Second) // the first connection is slow to open
		}
		return dialer.DialContext(ctx, network, addr)
	}
	reg := prometheus.NewRegistry()
	const requests = 6
	crmSide := sendAtLimitTwo(t, env, slowFirst, syncer.NewSyncMetrics(reg, nil), requests)
	if got := len(crmSide.times); got != requests {
		t.Fatalf("the CRM saw %d requests, want %d", got, requests)
	}
	// Every request's delay from admission to the wire is observed, for operators to compare with the margin.
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var observed uint64
	for _, f := range families {
		if f.GetName() == "leadgate_crm_admission_to_wire_seconds" {
			for _, m := range f.GetMetric() {
				observed += m.GetHistogram().GetSampleCount()
			}
		}
	}
	if observed != requests {
		t.Fatalf("admission-to-wire observations = %d, want %d", observed, requests)
	}
}

// stallingConn holds up the first write of all its dialer's connections, as a loaded host would hold up
// a request after admission.
type stallingConn struct {
	net.Conn
	stall *atomic.Bool
	for_  time.Duration
}

func (c stallingConn) Write(b []byte) (int, error) {
	if c.stall.CompareAndSwap(true, false) {
		time.Sleep(c.for_)
	}
	return c.Conn.Write(b)
}

// A request held up between admission and the wire counts from when its bytes went out: the requests
// admitted after it wait for it, so the CRM never sees limit+1 in one second. Held up within the window
// and margin, the move to its send time is what keeps the limit; held up longer, its admission would
// have left the window before it went out, and only its counting as pending until answered keeps it.
func TestCRMRequestHeldUpAfterAdmissionCountsFromWhenItWentOut(t *testing.T) {
	t.Parallel()
	for _, heldUp := range []time.Duration{600 * time.Millisecond, 1500 * time.Millisecond} {
		t.Run(heldUp.String(), func(t *testing.T) {
			env := newSyncEnv(t)
			var stall atomic.Bool
			stall.Store(true)
			var dialer net.Dialer
			stallFirstWrite := func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := dialer.DialContext(ctx, network, addr)
				return stallingConn{Conn: c, stall: &stall, for_: heldUp}, err
			}
			sendAtLimitTwo(t, env, stallFirstWrite, nil, 6)
		})
	}
}

// sendAtLimitTwo sends requests concurrently through a destination limited to 2 requests/s, over
// dial, and returns what the CRM saw; it fails the test if the CRM saw more than 2 in any second.
func sendAtLimitTwo(t *testing.T, env *syncEnv, dial func(ctx context.Context, network, addr string) (net.Conn, error),
	metrics *syncer.SyncMetrics, requests int) *arrivals {
	t.Helper()
	crmSide := &arrivals{}
	srv := httptest.NewServer(crmSide)
	t.Cleanup(srv.Close)
	transport := &http.Transport{DisableKeepAlives: true, DialContext: dial}
	t.Cleanup(transport.CloseIdleConnections)
	connector := &syncer.Connector{Store: env.store, Box: env.box, Redis: env.rdb, Prefix: "test-" + t.Name() + ":",
		Transport: transport, Metrics: metrics}
	dest := env.addDestination(models.Destination{Kind: "activecampaign", BaseURL: srv.URL, RateLimitRPS: 2}, "ac-token")
	conn, err := connector.Connect(env.ctx, dest)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, requests)
	for range requests {
		go func() { errs <- conn.Dest.TestConnection(env.ctx) }()
	}
	for range requests {
		if err := <-errs; err != nil {
			t.Fatalf("request through the limiter: %v", err)
		}
	}
	if got := crmSide.maxIn(time.Second); got > 2 {
		for _, a := range crmSide.times {
			t.Logf("arrival %s", a.Format("05.000"))
		}
		t.Fatalf("the CRM saw %d requests within one second, limit 2", got)
	}
	return crmSide
}
