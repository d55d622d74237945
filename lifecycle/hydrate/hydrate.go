// Package hydrate turns id-only webhooks into full leads: a Meta lead by its leadgen id through the Graph
// API with a page access token, a HubSpot contact by its objectId. Every request passes the same
// distributed rate limiter as CRM writes.
package hydrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leadgate/leadgate/crm/ratelimit"
	"github.com/leadgate/leadgate/internal/egress"
	"github.com/leadgate/leadgate/internal/secretbox"
	"github.com/leadgate/leadgate/models"
)

// ErrNoCredentials means the workspace has no token for the provider: the event keeps waiting.
var ErrNoCredentials = errors.New("hydrate: no provider credentials configured")

// ErrUnsupported means the hydration names a provider or object this package cannot fetch.
var ErrUnsupported = errors.New("hydrate: unsupported provider object")

// Error is a provider failure; Retry says whether trying again later may succeed (rate limits, 5xx,
// network) as opposed to a bad token or an unknown id.
type Error struct {
	Provider   string
	Status     int
	Retry      bool
	RetryAfter time.Duration
	Message    string
}

func (e *Error) Error() string {
	return fmt.Sprintf("hydrate %s (HTTP %d): %s", e.Provider, e.Status, e.Message)
}

// Target names the provider object of an id-only event: the JSON stored in events.hydration
// ({"Provider":"meta","Object":"leadgen","ID":"…"}; keys match case-insensitively).
type Target struct {
	Provider string `json:"provider"`
	Object   string `json:"object"`
	ID       string `json:"id"`
}

// ParseTarget reads events.hydration: provider and object are lower-cased, the id must be present.
func ParseTarget(raw json.RawMessage) (Target, error) {
	var t Target
	if err := json.Unmarshal(raw, &t); err != nil {
		return t, fmt.Errorf("hydrate: read target: %w", err)
	}
	t.Provider, t.Object, t.ID = strings.ToLower(strings.TrimSpace(t.Provider)), strings.ToLower(strings.TrimSpace(t.Object)), strings.TrimSpace(t.ID)
	if t.ID == "" {
		return t, fmt.Errorf("hydrate: target has no id: %w", ErrUnsupported)
	}
	return t, nil
}

// Lead is what a provider knows about the lead. Email and phone are as the provider gives them: the
// caller normalizes them like any ingested value.
type Lead struct {
	Email, Phone, FirstName, LastName string
	Fields                            map[string]string
}

// Service hydrates id-only events with the workspace's provider credentials.
type Service struct {
	Store   *models.Store
	Box     *secretbox.Box
	Limiter func(cfg ratelimit.Config) (*ratelimit.Limiter, error) // nil: no rate limit
	HTTP    *http.Client                                           // default: Egress's client, 15 s timeout
	// Egress is the SSRF guard of provider requests, whose base_url an editor may override (nil:
	// egress.Outbound(nil), public addresses only).
	Egress *egress.Guard
	// MetaGraphURL and HubSpotURL override the providers' hosts (tests); a credential's base_url wins.
	MetaGraphURL string
	HubSpotURL   string

	clientOnce sync.Once
	guarded    *http.Client
}

// Default provider hosts and the Graph API version used.
const (
	DefaultMetaGraphURL = "https://graph.facebook.com/v21.0"
	DefaultHubSpotURL   = "https://api.hubapi.com"
)

// Hydrate fetches the lead named by hydration for a workspace. It returns ErrNoCredentials when the
// workspace has no token for the provider, ErrUnsupported for an unknown provider/object, and *Error for
// provider failures.
func (s *Service) Hydrate(ctx context.Context, workspaceID int64, hydration json.RawMessage) (email, phone, first, last string, fields map[string]string, err error) {
	lead, err := s.Fetch(ctx, workspaceID, hydration)
	if err != nil {
		return "", "", "", "", nil, err
	}
	return lead.Email, lead.Phone, lead.FirstName, lead.LastName, lead.Fields, nil
}

// Fetch is Hydrate returning a Lead.
func (s *Service) Fetch(ctx context.Context, workspaceID int64, hydration json.RawMessage) (Lead, error) {
	t, err := ParseTarget(hydration)
	if err != nil {
		return Lead{}, err
	}
	var base string
	switch {
	case t.Provider == models.ProviderMeta && t.Object == "leadgen":
		base = orDefault(s.MetaGraphURL, DefaultMetaGraphURL)
	case t.Provider == models.ProviderHubSpot && t.Object == "contact":
		base = orDefault(s.HubSpotURL, DefaultHubSpotURL)
	default:
		return Lead{}, fmt.Errorf("hydrate: %s %s: %w", t.Provider, t.Object, ErrUnsupported)
	}
	cred, err := s.Store.ProviderCredentialGet(ctx, workspaceID, t.Provider)
	if errors.Is(err, models.ErrNotFound) {
		return Lead{}, ErrNoCredentials
	}
	if err != nil {
		return Lead{}, err
	}
	token, err := s.Box.Open(cred.TokenEnc)
	if err != nil {
		return Lead{}, fmt.Errorf("hydrate: open %s token: %w", t.Provider, err)
	}
	if cred.BaseURL != "" {
		base = cred.BaseURL
	}
	c := &client{http: s.client(), base: strings.TrimRight(base, "/"), token: token, provider: t.Provider}
	if err := s.limit(ctx, workspaceID, cred); err != nil {
		return Lead{}, err
	}
	if t.Provider == models.ProviderMeta {
		return c.metaLead(ctx, t.ID)
	}
	return c.hubspotContact(ctx, t.ID)
}

// limit waits for the provider's shared budget (Meta: per page token; HubSpot: 10 s window).
func (s *Service) limit(ctx context.Context, workspaceID int64, cred models.ProviderCredential) error {
	if s.Limiter == nil {
		return nil
	}
	rps := cred.RateLimitRPS
	if rps <= 0 {
		rps = 10
	}
	cfg := ratelimit.Config{Limit: rps, Window: time.Second}
	if cred.Provider == models.ProviderHubSpot {
		cfg = ratelimit.Config{Limit: rps * 10, Window: 10 * time.Second}
	}
	lim, err := s.Limiter(cfg)
	if err != nil {
		return err
	}
	return lim.Wait(ctx, "provider:"+strconv.FormatInt(workspaceID, 10)+":"+cred.Provider)
}

func (s *Service) client() *http.Client {
	if s.HTTP != nil {
		return s.HTTP
	}
	s.clientOnce.Do(func() {
		g := s.Egress
		if g == nil {
			g = egress.Outbound(nil)
		}
		c := *g
		c.Timeout = 15 * time.Second
		s.guarded = c.Client()
	})
	return s.guarded
}

func orDefault(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

// New returns a Service whose requests share Redis-backed rate limits across replicas and go through
// guard (nil: public addresses only).
func New(store *models.Store, box *secretbox.Box, rdb redis.Scripter, guard *egress.Guard) *Service {
	local := &ratelimit.Local{} // the process's own admissions survive a Redis restart (ratelimit.Config.Local)
	return &Service{Store: store, Box: box, Egress: guard, Limiter: func(cfg ratelimit.Config) (*ratelimit.Limiter, error) {
		cfg.Prefix, cfg.Local = "leadgate:ratelimit:", local
		return ratelimit.New(rdb, cfg)
	}}
}
