// Package sandbox is leadgate's built-in CRM: contacts with fields and stages kept in Postgres, behaving
// like a real CRM behind crm.Destination so the whole flow runs (and can be watched) with no CRM account.
// It has its own request rate limit (answering 429 with Retry-After above it) and optional injected 429s,
// 503s and latency, so pausing, backoff and dead letters can be exercised end to end.
//
// One Upsert call is one "request" (the sandbox offers a batch endpoint of up to 100 contacts).
package sandbox

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/ratelimit"
)

// Field keys of the sandbox record, as used in crm.Result.Written / crm.Contact.Previous.
const (
	FieldEmail     = "email"
	FieldPhone     = "phone"
	FieldFirstName = "first_name"
	FieldLastName  = "last_name"
	FieldCompany   = "company"
	FieldStage     = "stage"
)

// Options shape the sandbox's behaviour.
type Options struct {
	RateLimit   int           // requests accepted per second before answering 429; 0 = unlimited
	Fail429Rate float64       // share of requests answered 429 at random
	Fail503Rate float64       // share of requests answered 503 at random
	Latency     time.Duration // added to every request
	LoopField   string        // default crm.DefaultLoopField
	SyncField   string        // default crm.DefaultSyncField
	Seed        uint64        // seeds the injected faults
	Now         func() time.Time
	// Account, when set, counts RateLimit for the whole sandbox account across replicas (in Redis), as a
	// real CRM counts its account's requests wherever they come from. Without it (or while Redis fails)
	// each process counts its own requests.
	Account *ratelimit.Limiter
}

// Sandbox is one sandbox destination.
type Sandbox struct {
	db     *gorm.DB
	destID int64
	opts   Options

	mu     sync.Mutex
	rng    *rand.Rand
	recent []time.Time // admitted request times within the last second
}

var _ crm.Destination = (*Sandbox)(nil)

// New returns the sandbox of destination destinationID stored through db.
func New(db *gorm.DB, destinationID int64, opts Options) *Sandbox {
	if opts.LoopField == "" {
		opts.LoopField = crm.DefaultLoopField
	}
	if opts.SyncField == "" {
		opts.SyncField = crm.DefaultSyncField
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Sandbox{db: db, destID: destinationID, opts: opts, rng: rand.New(rand.NewPCG(opts.Seed, uint64(destinationID)))}
}

// Kind implements crm.Destination.
func (s *Sandbox) Kind() string { return crm.KindSandbox }

// MaxBatch implements crm.Destination: the sandbox's batch endpoint takes 100 contacts.
func (s *Sandbox) MaxBatch() int { return 100 }

// TestConnection makes one request (subject to the injected faults) and reads the store.
func (s *Sandbox) TestConnection(ctx context.Context) error {
	if err := s.admit(ctx); err != nil {
		return err
	}
	if err := s.db.WithContext(ctx).Exec(`SELECT 1 FROM sandbox_contacts WHERE destination_id = ? LIMIT 1`, s.destID).Error; err != nil {
		return &crm.Error{Class: crm.Transient, Message: "sandbox: " + err.Error()}
	}
	return nil
}

// Discover lists the custom fields in use; the sandbox accepts any field, so the loop fields always exist.
func (s *Sandbox) Discover(ctx context.Context) (crm.Discovery, error) {
	var keys []string
	err := s.db.WithContext(ctx).Raw(`SELECT DISTINCT jsonb_object_keys(fields) FROM sandbox_contacts WHERE destination_id = ? ORDER BY 1`, s.destID).Scan(&keys).Error
	if err != nil {
		return crm.Discovery{}, fmt.Errorf("sandbox: discover: %w", err)
	}
	d := crm.Discovery{Loop: crm.LoopCheck{LoopField: s.opts.LoopField, LoopFieldFound: true, SyncField: s.opts.SyncField, SyncFieldFound: true}}
	for _, k := range []string{FieldEmail, FieldPhone, FieldFirstName, FieldLastName, FieldCompany, FieldStage} {
		d.Fields = append(d.Fields, crm.RemoteField{ID: k, Key: k, Label: k, Type: "text"})
	}
	for _, k := range keys {
		d.Fields = append(d.Fields, crm.RemoteField{ID: k, Key: k, Label: k, Type: "text"})
	}
	return d, nil
}

// admit applies latency, the sandbox's own rate limit and the injected faults to one request.
func (s *Sandbox) admit(ctx context.Context) error {
	if s.opts.Latency > 0 {
		t := time.NewTimer(s.opts.Latency)
		select {
		case <-ctx.Done():
			t.Stop()
			return &crm.Error{Class: crm.Transient, Message: "sandbox: " + ctx.Err().Error()}
		case <-t.C:
		}
	}
	if s.opts.RateLimit > 0 && s.opts.Account != nil {
		wait, err := s.opts.Account.Allow(ctx, "sandbox:"+strconv.FormatInt(s.destID, 10))
		if err == nil && wait > 0 {
			return &crm.Error{Class: crm.RateLimited, Status: 429, RetryAfter: wait, Message: "sandbox: rate limit exceeded"}
		}
		if err == nil {
			return s.injectFault()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Now()
	if s.opts.RateLimit > 0 {
		cut := now.Add(-time.Second)
		i := 0
		for i < len(s.recent) && !s.recent[i].After(cut) {
			i++
		}
		s.recent = s.recent[i:]
		if len(s.recent) >= s.opts.RateLimit {
			return &crm.Error{Class: crm.RateLimited, Status: 429, RetryAfter: s.recent[0].Add(time.Second).Sub(now),
				Message: "sandbox: rate limit exceeded"}
		}
		s.recent = append(s.recent, now)
	}
	return s.injectFaultLocked()
}

// injectFault draws the injected 429/503 for one admitted request.
func (s *Sandbox) injectFault() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.injectFaultLocked()
}

func (s *Sandbox) injectFaultLocked() error {
	switch r := s.rng.Float64(); {
	case r < s.opts.Fail429Rate:
		return &crm.Error{Class: crm.RateLimited, Status: 429, RetryAfter: time.Second, Message: "sandbox: injected 429"}
	case r < s.opts.Fail429Rate+s.opts.Fail503Rate:
		return &crm.Error{Class: crm.Transient, Status: 503, Message: "sandbox: injected 503"}
	}
	return nil
}
