package loop

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Writes remembers, per contact identity, the values leadgate last wrote to
// the CRM, for the echo window, so that an echo without the loop-breaker flag
// is still recognised by its values.
type Writes struct {
	Redis  redis.UniversalClient
	Prefix string // key prefix, default "lg:loop:written"
}

// Remember records what leadgate just wrote for the contact identified by
// identity (its normalized email, else its E.164 phone), in leadgate's names
// ("stage", "first_name", custom field names), replacing the previous record.
// The sync engine calls it after a successful CRM write.
func (w *Writes) Remember(ctx context.Context, workspaceID int64, identity string, values map[string]string, ttl time.Duration) error {
	if identity == "" || len(values) == 0 {
		return nil
	}
	key := w.key(workspaceID, identity)
	pipe := w.Redis.TxPipeline()
	pipe.Del(ctx, key)
	pipe.HSet(ctx, key, values)
	pipe.Expire(ctx, key, ttl)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("loop: remember write: %w", err)
	}
	return nil
}

// Recall returns what leadgate last wrote for identity within the echo
// window, or nil.
func (w *Writes) Recall(ctx context.Context, workspaceID int64, identity string) (map[string]string, error) {
	if identity == "" {
		return nil, nil
	}
	m, err := w.Redis.HGetAll(ctx, w.key(workspaceID, identity)).Result()
	if err != nil {
		return nil, fmt.Errorf("loop: recall write: %w", err)
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

func (w *Writes) key(workspaceID int64, identity string) string {
	p := w.Prefix
	if p == "" {
		p = "lg:loop:written"
	}
	return fmt.Sprintf("%s:%d:%s", p, workspaceID, strings.ToLower(identity))
}
