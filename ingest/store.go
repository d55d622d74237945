package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/leadgate/leadgate/ingest/mapping"
	"github.com/leadgate/leadgate/ingest/spool"
	"github.com/leadgate/leadgate/models"
)

// gateKey is the Redis fast-gate key of an idempotency key.
// gateKey is the fast-gate key of an idempotency key. The workspace is its hash tag: a delivery's items
// all belong to one workspace, so the gate's MGET stays within one Redis Cluster slot.
func gateKey(workspaceID int64, key string) string {
	return fmt.Sprintf("lg:idem:{%d}:%s", workspaceID, key)
}

// store makes the delivery's items durable and answers per CONTRACT.md.
func (s *Service) store(ctx context.Context, src models.Source, ct string, items []mapping.Item, now time.Time) Answer {
	batch := make([]models.IngestItem, len(items))
	for i, it := range items {
		l := normalizeItem(it, src.Config, now, s.Phones)
		ev, err := l.event(newEventID(), src, ct, now)
		if err != nil {
			return errorAnswer(http.StatusBadRequest, "malformed", err.Error())
		}
		if err := s.applyFilters(ctx, src, &ev, now); err != nil {
			return errorAnswer(http.StatusBadRequest, "malformed", err.Error())
		}
		key, windowed := idempotencyKey(src.Kind, it.DeliveryID, src.WorkspaceID, src.ID, src.Config.DedupeFields, l)
		batch[i] = models.IngestItem{Event: ev, Key: key, Windowed: windowed}
	}
	// A delivery bound for the group statement learns whether it is a duplicate from that same statement,
	// so reading the gate first would only add a Redis round trip to every new event; the gate is read
	// for it when Postgres cannot answer. Deliveries stored in a transaction of their own read it first.
	grouped := s.grouped(batch)
	if !grouped {
		if results, ok := s.fastGate(ctx, batch); ok {
			return answer(batch, results)
		}
	}
	if s.Spool != nil && s.Postgres.Down() {
		// Postgres failed moments ago and its canary has not seen it back: spool now rather than wait
		// for this delivery's own statement to fail.
		if grouped {
			if results, ok := s.fastGate(ctx, batch); ok {
				return answer(batch, results)
			}
		}
		return s.spoolOrRefuse(ctx, src, batch, errPostgresDown, now)
	}
	results, todo := s.spooledAlready(src.WorkspaceID, batch)
	if len(todo) > 0 {
		stored, err := s.storeItems(ctx, batch, todo)
		if err != nil {
			if ctx.Err() != nil {
				return unavailable("request cancelled before the event was stored")
			}
			if !models.IsUnavailable(err) {
				s.Log.Error("ingest: store", "source", src.ID, "err", err)
				return unavailable("the event could not be stored; retry later")
			}
			s.Postgres.MarkDown(err)
			if grouped {
				if results, ok := s.fastGate(ctx, batch); ok {
					return answer(batch, results)
				}
			}
			return s.spoolOrRefuse(ctx, src, batch, err, now)
		}
		s.Postgres.MarkUp()
		for j, i := range todo {
			results[i] = stored[j]
		}
		s.afterCommit(ctx, batch, results)
		s.countUncounted(ctx)
	}
	return answer(batch, results)
}

// countUncounted records the duplicates answered while Postgres could not count them, now that a write
// went through.
func (s *Service) countUncounted(ctx context.Context) {
	if s.uncounted.empty() {
		return
	}
	if err := s.uncounted.flush(context.WithoutCancel(ctx), s.Store.DuplicateCountN); err != nil {
		s.Log.Warn("ingest: duplicates still not counted; will retry", "err", err)
	}
}

// spooledAlready answers the items still waiting in the spool from an outage
// as duplicates of the spooled event (a retry that arrives after Postgres
// returned but before the replay), and returns the indices left to store.
func (s *Service) spooledAlready(workspaceID int64, batch []models.IngestItem) ([]models.IngestResult, []int) {
	results := make([]models.IngestResult, len(batch))
	todo := make([]int, 0, len(batch))
	pending := s.Spool != nil && s.Spool.Pending() > 0
	for i, it := range batch {
		if pending {
			if id, ok := s.Spool.Lookup(workspaceID, it.Key); ok {
				s.uncounted.addSpooled(id)
				results[i] = models.IngestResult{EventID: id, Duplicate: true}
				continue
			}
		}
		todo = append(todo, i)
	}
	return results, todo
}

// storeItems commits batch[todo] in one transaction. The store sets each
// item's final idempotency key, so the items are written back into batch.
func (s *Service) storeItems(ctx context.Context, batch []models.IngestItem, todo []int) ([]models.IngestResult, error) {
	if s.grouped(batch) && len(todo) == 1 {
		res, item, err := s.Group.Commit(ctx, batch[todo[0]])
		batch[todo[0]] = item
		if err != nil {
			return nil, err
		}
		results := []models.IngestResult{res}
		return results, nil
	}
	// A statement that outlives StoreTimeout counts as Postgres being away (the delivery is spooled), so a
	// server that stopped answering holds a sender for that long at most.
	ctx, cancel := context.WithTimeout(ctx, s.storeTimeout())
	defer cancel()
	if len(todo) == len(batch) {
		return s.Store.IngestStore(ctx, batch, s.Window)
	}
	sub := make([]models.IngestItem, len(todo))
	for j, i := range todo {
		sub[j] = batch[i]
	}
	res, err := s.Store.IngestStore(ctx, sub, s.Window)
	for j, i := range todo {
		batch[i] = sub[j]
	}
	return res, err
}

func (s *Service) storeTimeout() time.Duration {
	if s.StoreTimeout > 0 {
		return s.StoreTimeout
	}
	return 2 * time.Second
}

// grouped reports whether the delivery is stored by the group statement: a single event with a
// provider or content key outside any sliding window.
func (s *Service) grouped(batch []models.IngestItem) bool {
	return s.Group != nil && len(batch) == 1 && !batch[0].Windowed
}

// fastGate answers from Redis when every item's key is known to be committed.
// Redis holds a key only after its commit, so a hit is always safe; a miss or
// an outage falls through to Postgres, which is the truth.
func (s *Service) fastGate(ctx context.Context, batch []models.IngestItem) ([]models.IngestResult, bool) {
	if s.Redis == nil || !s.redisDown.allow(s.Now()) {
		return nil, false
	}
	keys := make([]string, len(batch))
	for i, it := range batch {
		keys[i] = gateKey(it.Event.WorkspaceID, it.Key)
	}
	vals, err := s.Redis.MGet(ctx, keys...).Result()
	if err != nil {
		s.redisDown.record(err, s.Now())
		return nil, false
	}
	out := make([]models.IngestResult, len(batch))
	for i, v := range vals {
		str, ok := v.(string)
		if !ok {
			return nil, false
		}
		eventID, storedKey, _ := strings.Cut(str, "|")
		out[i] = models.IngestResult{EventID: eventID, Duplicate: true}
		if storedKey == "" {
			storedKey = batch[i].Key
		}
		// Counted even when the sender hangs up: the delivery did reach us.
		if err := s.Store.DuplicateCount(context.WithoutCancel(ctx), batch[i].Event.WorkspaceID, storedKey); err != nil {
			s.uncounted.addKey(batch[i].Event.WorkspaceID, storedKey)
			s.Log.Warn("ingest: duplicate not counted yet; counted when Postgres takes writes again", "err", err)
		}
	}
	return out, true
}

// afterCommit publishes committed keys to the fast gate and announces the new
// events to the apply drainers (an event that waits for its provider's record
// gets a task of its own). Failures here lose nothing: the sweep re-announces
// pending events and Postgres still deduplicates.
func (s *Service) afterCommit(ctx context.Context, batch []models.IngestItem, results []models.IngestResult) {
	redisUp := s.redisDown.allow(s.Now())
	if s.Gate != nil && redisUp {
		s.Gate.Publish(s.gateEntries(batch, results)...)
	}
	announce := false
	for i, r := range results {
		ev := batch[i].Event
		if r.Duplicate || ev.Status != models.EventPending {
			continue
		}
		if !needsHydration(ev) && s.Trigger != nil {
			announce = true
			continue
		}
		err := errRedisPaused
		if redisUp {
			if err = s.Queue.EnqueueApply(ctx, r.EventID); err != nil {
				s.redisDown.record(err, s.Now())
				redisUp = s.redisDown.allow(s.Now())
			}
		}
		if err != nil {
			if s.Metrics != nil {
				s.Metrics.EnqueueErr.Inc()
			}
			s.Log.Warn("ingest: enqueue failed; the sweep will retry", "event", r.EventID, "err", err)
		}
	}
	if announce {
		s.Trigger.Announce()
	}
}

// needsHydration reports an id-only event: its provider is asked for the lead before it can be applied.
func needsHydration(ev models.Event) bool {
	return len(ev.Hydration) > 0 && ev.Email == nil && ev.Phone == nil
}

// gateEntries are the fast-gate keys of the newly committed items.
func (s *Service) gateEntries(batch []models.IngestItem, results []models.IngestResult) []gateEntry {
	entries := make([]gateEntry, 0, len(results))
	for i, r := range results {
		if r.Duplicate {
			continue
		}
		ev := batch[i].Event
		ttl := s.GateTTL
		if batch[i].Windowed {
			// The window runs from the event's arrival, which for a
			// replayed spool record may be long before this commit.
			if ttl = s.Window - s.Now().Sub(ev.ReceivedAt); ttl <= 0 {
				continue
			}
		}
		entries = append(entries, gateEntry{key: gateKey(ev.WorkspaceID, batch[i].Key), value: r.EventID + "|" + ev.IdempotencyKey, ttl: ttl})
	}
	return entries
}

// errPostgresDown explains a delivery spooled without trying Postgres.
var errPostgresDown = errors.New("postgres failed moments ago; spooled until a probe sees it back")

// errRedisPaused explains an enqueue skipped while the Redis breaker is open.
var errRedisPaused = errors.New("redis failed moments ago; not retried for a second")

// spoolOrRefuse keeps the delivery durable on local disk while Postgres is
// down, or answers 503 so the sender keeps it.
func (s *Service) spoolOrRefuse(ctx context.Context, src models.Source, batch []models.IngestItem, cause error, now time.Time) Answer {
	if s.Spool == nil {
		s.Log.Error("ingest: postgres unavailable, no spool", "err", cause)
		return unavailable("leadgate cannot store events right now; retry later")
	}
	results := make([]models.IngestResult, len(batch))
	var recs []spool.Record
	var recItem []int // batch index of each record
	for i, it := range batch {
		if id, ok := s.Spool.Lookup(src.WorkspaceID, it.Key); ok {
			s.uncounted.addSpooled(id)
			results[i] = models.IngestResult{EventID: id, Duplicate: true}
			continue
		}
		data, err := json.Marshal(it)
		if err != nil {
			return errorAnswer(http.StatusBadRequest, "malformed", "event could not be encoded")
		}
		recs = append(recs, spool.Record{ID: it.Event.ID, WorkspaceID: src.WorkspaceID, SourceID: src.ID, IdempotencyKey: it.Key, Data: data, SpooledAt: now})
		recItem = append(recItem, i)
		results[i] = models.IngestResult{EventID: it.Event.ID}
	}
	if len(recs) > 0 {
		err := s.Spool.Append(ctx, recs)
		var dup *spool.DuplicateError
		if errors.As(err, &dup) {
			// A concurrent delivery of the same key (a sender's retry racing its first attempt) was
			// spooled first: these are its duplicates, and the rest of the batch still goes in.
			recs = s.spooledMeanwhile(dup, recs, recItem, results)
			err = nil
			if len(recs) > 0 {
				err = s.Spool.Append(ctx, recs)
			}
		}
		if err != nil {
			s.Log.Error("ingest: spool append", "err", err)
			return unavailable("leadgate cannot store events right now; retry later")
		}
		if s.Metrics != nil {
			s.Metrics.Spooled.Add(float64(len(recs)))
		}
		s.Log.Warn("ingest: postgres unavailable, events spooled", "count", len(recs), "err", cause)
	}
	a := answer(batch, results)
	a.Outcome = "spooled"
	return a
}

// spooledMeanwhile answers the records a concurrent append spooled first as duplicates of the spooled
// events (recItem maps each record to its batch index) and returns the records still to append.
func (s *Service) spooledMeanwhile(dup *spool.DuplicateError, recs []spool.Record, recItem []int, results []models.IngestResult) []spool.Record {
	spooled := make(map[int]string, len(dup.Duplicates))
	for _, d := range dup.Duplicates {
		spooled[d.Index] = d.EventID
	}
	var rest []spool.Record
	for j, r := range recs {
		if id, ok := spooled[j]; ok {
			s.uncounted.addSpooled(id)
			results[recItem[j]] = models.IngestResult{EventID: id, Duplicate: true}
			continue
		}
		rest = append(rest, r)
	}
	return rest
}

// answer renders CONTRACT.md's single- or multi-event answer.
func answer(batch []models.IngestItem, results []models.IngestResult) Answer {
	status := func(i int) (string, string) {
		switch {
		case results[i].Duplicate:
			return "duplicate", ""
		case batch[i].Event.Status == models.EventRejected:
			return "rejected", batch[i].Event.Reason
		}
		return "queued", ""
	}
	if len(batch) == 1 {
		// A struct, not a map: encoding/json sorts a map's keys by reflection on every answer.
		st, reason := status(0)
		return Answer{Status: http.StatusOK, Body: ItemAnswer{EventID: results[0].EventID, Status: st, Reason: reason}, Outcome: st}
	}
	overall := "duplicate"
	items := make([]ItemAnswer, len(batch))
	for i := range batch {
		st, reason := status(i)
		items[i] = ItemAnswer{EventID: results[i].EventID, Status: st, Reason: reason}
		if st != "duplicate" {
			overall = "queued"
		}
	}
	return Answer{Status: http.StatusOK, Body: map[string]any{"status": overall, "events": items}, Outcome: overall}
}
