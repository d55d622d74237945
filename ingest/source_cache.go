package ingest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/leadgate/leadgate/ingest/signature"
	"github.com/leadgate/leadgate/internal/secretbox"
	"github.com/leadgate/leadgate/models"
)

// sourceEntry is a source with its secrets decrypted, ready for verification.
type sourceEntry struct {
	src       models.Source
	verify    signature.Config
	fetchedAt time.Time
}

// fresh reports whether the entry may serve at now: younger than ttl, and not
// still holding a previous secret whose grace has ended since it was loaded.
func (e *sourceEntry) fresh(now time.Time, ttl time.Duration) bool {
	if now.Sub(e.fetchedAt) >= ttl {
		return false
	}
	until := e.src.PreviousSecretUntil
	return until == nil || !e.fetchedAt.Before(*until) || now.Before(*until)
}

// SourceCache keeps recently used sources in memory. Entries are refreshed
// after TTL; when Postgres is unreachable a stale entry keeps serving, so a
// known source can still be verified and spooled during an outage.
type SourceCache struct {
	Store *models.Store
	Box   *secretbox.Box
	TTL   time.Duration
	// Postgres, while down, makes a stale entry serve without asking Postgres first (nil: always ask).
	Postgres *PostgresHealth

	mu      sync.Mutex
	entries map[string]*sourceEntry
}

// errSourceUnavailable means Postgres is down and the source is not cached.
var errSourceUnavailable = errors.New("ingest: source lookup unavailable")

// Get returns the source for an ingest token.
func (c *SourceCache) Get(ctx context.Context, token string, now time.Time) (*sourceEntry, error) {
	c.mu.Lock()
	e, ok := c.entries[token]
	c.mu.Unlock()
	if ok && (e.fresh(now, c.TTL) || c.Postgres.Down()) {
		return e, nil
	}
	src, err := c.Store.SourceGetByToken(ctx, token)
	if errors.Is(err, models.ErrNotFound) {
		c.Forget(token)
		return nil, models.ErrNotFound
	}
	if err != nil {
		if ok {
			return e, nil // stale but usable during an outage
		}
		return nil, fmt.Errorf("%w: %w", errSourceUnavailable, err)
	}
	fresh, err := c.entry(src, now)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[string]*sourceEntry{}
	}
	c.entries[token] = fresh
	c.mu.Unlock()
	return fresh, nil
}

// Forget drops a token so the next delivery reloads it (after an edit).
func (c *SourceCache) Forget(token string) {
	c.mu.Lock()
	delete(c.entries, token)
	c.mu.Unlock()
}

func (c *SourceCache) entry(src models.Source, now time.Time) (*sourceEntry, error) {
	cur, err := c.Box.Open(src.SecretEnc)
	if err != nil {
		return nil, fmt.Errorf("ingest: source %d secret: %w", src.ID, err)
	}
	secrets := []string{}
	if cur != "" {
		secrets = append(secrets, cur)
	}
	if src.PreviousSecretUntil != nil && now.Before(*src.PreviousSecretUntil) {
		prev, err := c.Box.Open(src.PreviousSecretEnc)
		if err != nil {
			return nil, fmt.Errorf("ingest: source %d previous secret: %w", src.ID, err)
		}
		if prev != "" {
			secrets = append(secrets, prev)
		}
	}
	return &sourceEntry{src: src, verify: VerifyConfig(src.Config, secrets), fetchedAt: now}, nil
}

// VerifyConfig turns a source's stored settings and plaintext secrets into the
// signature package's configuration.
func VerifyConfig(sc models.SourceConfig, secrets []string) signature.Config {
	return signature.Config{
		Secrets:         secrets,
		Header:          sc.Header,
		Encoding:        sc.Encoding,
		Prefix:          sc.Prefix,
		Algorithm:       sc.Algorithm,
		TimestampHeader: sc.TimestampHeader,
		Tolerance:       time.Duration(sc.ToleranceSec) * time.Second,
		Mode:            sc.Mode,
		BodyField:       sc.BodyField,
		VerifyToken:     sc.VerifyToken,
		PublicKeys:      sc.PublicKeys,
	}
}
