package syncer

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/ratelimit"
	"github.com/leadgate/leadgate/crm/sandbox"
	"github.com/leadgate/leadgate/internal/egress"
	"github.com/leadgate/leadgate/internal/secretbox"
	"github.com/leadgate/leadgate/models"
)

// Default request rates per kind when a destination leaves rate_limit_rps at 0: ActiveCampaign's documented
// 5 requests/s per account, HubSpot's and GoHighLevel's 100 per 10 s. The sandbox is unlimited by default.
var defaultRPS = map[string]int{crm.KindActiveCampaign: 5, crm.KindHubSpot: 10, crm.KindGoHighLevel: 10}

// requestTimeout bounds one CRM request once the rate limiter has admitted it.
const requestTimeout = 30 * time.Second

// Connector builds the adapter of a destination with its credentials opened and every request passing
// through the destination's distributed rate limiter. Adapters are cached per destination and rebuilt
// when the destination changes, so their lookups (field ids, tag ids) survive between passes.
type Connector struct {
	Store   *models.Store
	Box     *secretbox.Box
	Redis   redis.Scripter
	Prefix  string       // rate-limiter key prefix; default "leadgate:ratelimit:"
	Metrics *SyncMetrics // optional
	// Egress is the SSRF guard every CRM request is dialed through (nil: egress.Outbound(nil), public
	// addresses only); production passes the one allowing LEADGATE_EGRESS_ALLOWED_HOSTS.
	Egress *egress.Guard
	// Transport replaces the guarded transport under the limiter (tests of the transport itself).
	Transport http.RoundTripper

	guardOnce sync.Once
	guarded   http.RoundTripper
	mu        sync.Mutex
	cache     map[int64]*Conn
	local     ratelimit.Local // this process's own admissions, kept across rebuilt adapters
}

// Conn is a connected destination: the adapter, its limiter and its request counters.
type Conn struct {
	Dest    crm.Destination
	Limiter *ratelimit.Limiter // nil: no limit
	Key     string             // limiter key
	Kind    string
	// Daily paces backfill work against the CRM's daily quota (nil: no daily cap known).
	Daily *ratelimit.Daily

	stamp       time.Time
	calls       atomic.Int64
	rateLimited atomic.Int64
}

// Calls is how many requests the adapter sent so far.
func (c *Conn) Calls() int64 { return c.calls.Load() }

// RateLimitedCalls is how many of them were answered 429.
func (c *Conn) RateLimitedCalls() int64 { return c.rateLimited.Load() }

// Connect returns the destination's adapter, building it when the destination changed since.
func (c *Connector) Connect(ctx context.Context, d models.Destination) (*Conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cache == nil {
		c.cache = map[int64]*Conn{}
	}
	if cur, ok := c.cache[d.ID]; ok && cur.stamp.Equal(d.UpdatedAt) {
		return cur, nil
	}
	conn, err := c.build(d)
	if err != nil {
		return nil, err
	}
	c.cache[d.ID] = conn
	return conn, nil
}

// Forget drops a cached adapter (after an edit).
func (c *Connector) Forget(id int64) {
	c.mu.Lock()
	delete(c.cache, id)
	c.mu.Unlock()
}

func (c *Connector) build(d models.Destination) (*Conn, error) {
	conn := &Conn{Kind: d.Kind, Key: "dest:" + strconv.FormatInt(d.ID, 10), stamp: d.UpdatedAt}
	lim, err := c.limiter(d)
	if err != nil {
		return nil, err
	}
	conn.Limiter = lim
	if conn.Daily, err = c.daily(d); err != nil {
		return nil, err
	}
	if d.Kind == crm.KindSandbox {
		account, err := c.sandboxAccount(d)
		if err != nil {
			return nil, err
		}
		sb := sandbox.New(c.Store.DB(), d.ID, sandbox.Options{RateLimit: d.Config.SandboxRateLimit, Account: account, Fail429Rate: d.Config.Fail429Rate,
			Fail503Rate: d.Config.Fail503Rate, Latency: time.Duration(d.Config.LatencyMS) * time.Millisecond,
			LoopField: d.Config.LoopField, SyncField: d.Config.SyncField, Seed: uint64(d.ID)})
		conn.Dest = &limitedSandbox{Sandbox: sb, conn: conn, metrics: c.Metrics}
		return conn, nil
	}
	token := ""
	if len(d.APITokenEnc) > 0 {
		if token, err = c.Box.Open(d.APITokenEnc); err != nil {
			return nil, fmt.Errorf("syncer: open credentials of destination %d: %w", d.ID, err)
		}
	}
	client := &http.Client{Transport: &limitedTransport{base: c.transport(), conn: conn, metrics: c.Metrics}}
	dest, err := crm.New(crm.Config{Kind: d.Kind, BaseURL: d.BaseURL, APIToken: token, LocationID: d.Config.LocationID,
		StageField: d.Config.StageField, StageMode: d.Config.StageMode, Pipeline: d.Config.Pipeline, StageMap: d.Config.StageMap,
		FieldMap: d.Config.FieldMap, LoopField: d.Config.LoopField, SyncField: d.Config.SyncField, HTTPClient: client,
		AllowNullEmail: d.Config.AllowNullEmail, DealOwner: d.Config.DealOwner, Automations: d.Config.Automations})
	if err != nil {
		return nil, err
	}
	conn.Dest = dest
	return conn, nil
}

// transport is the HTTP transport under the limiter: Transport when set, else one guarded transport shared
// by every destination (a connection pool per process, not per adapter). An *http.Transport's
// connections remember their last write, for the limiter (see limitedTransport).
func (c *Connector) transport() http.RoundTripper {
	c.guardOnce.Do(func() {
		base := c.Transport
		if base == nil {
			g := c.Egress
			if g == nil {
				g = egress.Outbound(nil)
			}
			base = g.Transport()
		}
		if t, ok := base.(*http.Transport); ok {
			base = withWireClock(t)
		}
		c.guarded = base
	})
	return c.guarded
}

// limiter is the destination's shared budget: N requests per 1 s window (HubSpot and GoHighLevel count
// theirs per 10 s, so their budget is 10·N per 10 s).
func (c *Connector) limiter(d models.Destination) (*ratelimit.Limiter, error) {
	rps := d.RateLimitRPS
	if rps == 0 {
		rps = defaultRPS[d.Kind]
	}
	if rps <= 0 || c.Redis == nil {
		return nil, nil
	}
	cfg := ratelimit.Config{Prefix: c.Prefix, Limit: rps, Window: time.Second, InFlight: requestTimeout, Local: &c.local}
	if d.Kind == crm.KindHubSpot || d.Kind == crm.KindGoHighLevel {
		cfg.Limit, cfg.Window = rps*10, 10*time.Second
	}
	return ratelimit.New(c.Redis, cfg)
}

// sandboxAccount is the sandbox's own, CRM-side request count, shared by every replica like a real CRM
// account's (nil when the sandbox has no limit or there is no Redis). It is separate from leadgate's
// limiter: the sandbox answers 429 above its limit whatever leadgate's limiter allowed.
func (c *Connector) sandboxAccount(d models.Destination) (*ratelimit.Limiter, error) {
	if d.Config.SandboxRateLimit <= 0 || c.Redis == nil {
		return nil, nil
	}
	prefix := c.Prefix
	if prefix == "" {
		prefix = "leadgate:ratelimit:"
	}
	return ratelimit.New(c.Redis, ratelimit.Config{Prefix: prefix + "crm-side:", Limit: d.Config.SandboxRateLimit,
		Window: time.Second, Margin: -1})
}

// limitedSandbox puts the sandbox's requests (one per Upsert or action) through leadgate's limiter too.
type limitedSandbox struct {
	*sandbox.Sandbox
	conn    *Conn
	metrics *SyncMetrics
}

func (s *limitedSandbox) Upsert(ctx context.Context, batch []crm.Contact) []crm.Result {
	if err := s.wait(ctx); err != nil {
		out := make([]crm.Result, len(batch))
		for i, c := range batch {
			out[i] = crm.Result{LeadgateID: c.LeadgateID, RemoteID: c.RemoteID, Err: err, Written: c.Previous}
		}
		return out
	}
	out := s.Sandbox.Upsert(ctx, batch)
	s.count(ctx, out)
	return out
}

// RunAction runs a native side effect in the sandbox under the same limit.
func (s *limitedSandbox) RunAction(ctx context.Context, stableID, contactID, action string, params map[string]string) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	err := s.Sandbox.RunAction(ctx, stableID, contactID, action, params)
	s.conn.countCall(ctx)
	return err
}

func (s *limitedSandbox) wait(ctx context.Context) error {
	if s.conn.Limiter == nil {
		return nil
	}
	if err := s.conn.Limiter.Wait(ctx, s.conn.Key); err != nil {
		return &crm.Error{Class: crm.Transient, Message: err.Error()}
	}
	return nil
}

func (s *limitedSandbox) count(ctx context.Context, out []crm.Result) {
	s.conn.countCall(ctx)
	code := "200"
	if len(out) > 0 && out[0].Err != nil {
		if e, ok := out[0].Err.(*crm.Error); ok && e.Status != 0 {
			code = strconv.Itoa(e.Status)
		}
		if crm.ClassOf(out[0].Err) == crm.RateLimited {
			s.conn.countRateLimited(ctx)
		}
	}
	s.metrics.call(s.conn, code)
}

// Adapter returns the destination's adapter (the API's onboarding calls).
func (c *Connector) Adapter(ctx context.Context, d models.Destination) (crm.Destination, error) {
	conn, err := c.Connect(ctx, d)
	if err != nil {
		return nil, err
	}
	return conn.Dest, nil
}
