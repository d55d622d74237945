package filter

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/leadgate/leadgate/models"
)

// Loader returns a source's compiled rule set, caching it for TTL so ingest
// pays for compilation once per change, not once per event.
type Loader struct {
	Store *models.Store
	TTL   time.Duration // default 5 s
	Now   func() time.Time

	mu    sync.Mutex
	cache map[int64]loaded
}

type loaded struct {
	set     *Set
	version int
	at      time.Time
}

// ForSource returns the source's rule set, nil when it has none. A stored
// set that no longer compiles (an expr upgrade changed the language) is an
// error, never a silent "keep everything".
func (l *Loader) ForSource(ctx context.Context, workspaceID, sourceID int64) (*Set, error) {
	now := l.now()
	l.mu.Lock()
	c, ok := l.cache[sourceID]
	l.mu.Unlock()
	if ok && now.Sub(c.at) < l.ttl() {
		return c.set, nil
	}
	f, err := l.Store.SourceFilterGet(ctx, workspaceID, sourceID)
	var set *Set
	version := 0
	switch {
	case errors.Is(err, models.ErrNotFound):
	case err != nil:
		return nil, err
	default:
		version = f.Version
		if ok && c.version == version {
			set = c.set
		} else if set, err = compileStored(f); err != nil {
			return nil, err
		}
	}
	l.mu.Lock()
	if l.cache == nil {
		l.cache = map[int64]loaded{}
	}
	l.cache[sourceID] = loaded{set: set, version: version, at: now}
	l.mu.Unlock()
	return set, nil
}

// Cached returns the source's last loaded rule set however old it is, and whether one was loaded, so
// that ingest keeps filtering with it while Postgres is away.
func (l *Loader) Cached(sourceID int64) (*Set, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.cache[sourceID]
	return c.set, ok
}

// Forget drops a source's cached set (call after saving it).
func (l *Loader) Forget(sourceID int64) {
	l.mu.Lock()
	delete(l.cache, sourceID)
	l.mu.Unlock()
}

func compileStored(f models.SourceFilter) (*Set, error) {
	rules, err := ParseRules(f.Rules)
	if err != nil {
		return nil, err
	}
	set, err := Compile(rules)
	if err != nil {
		return nil, fmt.Errorf("filter: source %d rule set v%d: %w", f.SourceID, f.Version, err)
	}
	return set, nil
}

func (l *Loader) ttl() time.Duration {
	if l.TTL > 0 {
		return l.TTL
	}
	return 5 * time.Second
}

func (l *Loader) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}
