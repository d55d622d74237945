package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/leadgate/leadgate/ingest/filter"
	"github.com/leadgate/leadgate/models"
)

// applyFilters runs the source's drop/tag rules on a pending event. A dropped
// event is still stored (status dropped, with the rule that dropped it) so it
// stays visible and counted; tags ride along in the event's fields as
// "filter_tags" for the apply step. A filter that cannot be loaded keeps the
// event: a broken rule must never lose a lead.
func (s *Service) applyFilters(ctx context.Context, src models.Source, ev *models.Event, now time.Time) error {
	if s.Filters == nil || ev.Status != models.EventPending {
		return nil
	}
	set, err := s.filterSet(ctx, src)
	if err != nil {
		s.Log.Error("ingest: source filters unavailable; event kept", "source", src.ID, "err", err)
		return nil
	}
	if set.Empty() {
		return nil // most sources have no rules: building the rules' view of the event costs a JSON decode
	}
	v := filter.Evaluate(ctx, set, filter.EnvFromEvent(*ev, src))
	if v.Drop {
		ev.Status, ev.Reason, ev.ProcessedAt = models.EventDropped, v.Reason(), &now
		return nil
	}
	if len(v.Tags) == 0 {
		return nil
	}
	fields := map[string]any{}
	if len(ev.Fields) > 0 {
		if err := json.Unmarshal(ev.Fields, &fields); err != nil {
			return fmt.Errorf("fields: %w", err)
		}
	}
	fields["filter_tags"] = v.Tags
	b, err := json.Marshal(fields)
	if err != nil {
		return fmt.Errorf("fields: %w", err)
	}
	ev.Fields = b
	return nil
}

// filterSet is the source's rule set. While Postgres is away the last one loaded keeps serving, without a
// refresh that would make every spooled delivery wait for a connection attempt first.
func (s *Service) filterSet(ctx context.Context, src models.Source) (*filter.Set, error) {
	if s.Postgres.Down() {
		if set, ok := s.Filters.Cached(src.ID); ok {
			return set, nil
		}
	}
	set, err := s.Filters.ForSource(ctx, src.WorkspaceID, src.ID)
	if err != nil {
		if stale, ok := s.Filters.Cached(src.ID); ok {
			return stale, nil
		}
		return nil, err
	}
	return set, nil
}
