package models

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Sync queue statuses.
const (
	SyncPending = "pending"
	SyncDead    = "dead" // waiting on a dead letter (a scheduler retry, a replay or a newer version revives it)
)

// Sync queue lanes: live leads' writes are claimed before resync, import and backfill work.
const (
	LaneLive     = 0 // a change that apply (or an operator on one contact) just made
	LaneBackfill = 1 // a whole-destination resync, an import or a backfill
)

// Outbox statuses the CRM relay sets on crm_upsert rows.
const (
	OutboxPending    = "pending"
	OutboxQueued     = "queued"     // handed to every destination's sync queue
	OutboxSuperseded = "superseded" // a newer version of the same contact replaced it
	OutboxSent       = "sent"
	OutboxSkipped    = "skipped" // nothing to deliver to (no destination, no side-effect target)
	OutboxDead       = "dead"    // dead-lettered
)

// SyncItem is one claimed unit of CRM work: a contact's newest desired version for one destination.
type SyncItem struct {
	DestinationID int64
	ContactID     string
	WorkspaceID   int64
	Version       int64
	OutboxID      *int64
	Attempts      int
	DeadLetterID  *int64
	EnqueuedAt    time.Time
	Lane          int // LaneLive or LaneBackfill
}

// SyncFanOut claims up to limit pending crm_upsert outbox rows (FOR UPDATE SKIP LOCKED, so replicas share
// the work), coalesces them per contact (the newest version wins, older rows become superseded) and queues
// the newest for every live destination of the workspace that has not received that version yet. It
// returns how many outbox rows it consumed. The whole claim is written with one statement per table: a
// contact costs no round trip of its own.
func (s *Store) SyncFanOut(ctx context.Context, limit int) (int, error) {
	n := 0
	err := s.Tx(ctx, func(tx *Store) error {
		if err := tx.PlanForBatch(ctx); err != nil {
			return err
		}
		claimed, err := tx.outboxClaimUpserts(ctx, limit)
		if err != nil {
			return err
		}
		n = len(claimed)
		if n == 0 {
			return nil
		}
		newest := map[string]int{}
		for i, r := range claimed {
			if j, ok := newest[r.contactID]; !ok || claimed[j].version < r.version {
				newest[r.contactID] = i
			}
		}
		// In contact order: every writer of queue and outbox rows (SyncDone too) locks the queue rows of
		// its contacts in contact order, then their outbox rows in contact order, so two of them wait for
		// each other instead of deadlocking.
		var fan fanOut
		for _, i := range newest {
			fan.newest = append(fan.newest, claimed[i])
		}
		slices.SortFunc(fan.newest, func(a, b claimedUpsert) int { return strings.Compare(a.contactID, b.contactID) })
		for i, r := range claimed {
			if newest[r.contactID] != i {
				fan.superseded = append(fan.superseded, r)
			}
		}
		return tx.writeFanOut(ctx, fan)
	})
	if err != nil {
		return 0, fmt.Errorf("models: sync fan-out: %w", err)
	}
	return n, nil
}

// claimedUpsert is a pending crm_upsert outbox row a fan-out holds.
type claimedUpsert struct {
	id, workspaceID, version int64
	contactID                string
}

func (s *Store) outboxClaimUpserts(ctx context.Context, limit int) ([]claimedUpsert, error) {
	rows, err := s.pool().QueryContext(ctx, `SELECT id, workspace_id, contact_id::text, version FROM outbox
		WHERE kind = 'crm_upsert' AND status = 'pending' AND contact_id IS NOT NULL
		ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`, limit)
	if err != nil {
		return nil, fmt.Errorf("claim outbox: %w", err)
	}
	defer rows.Close()
	var out []claimedUpsert
	for rows.Next() {
		var r claimedUpsert
		if err := rows.Scan(&r.id, &r.workspaceID, &r.contactID, &r.version); err != nil {
			return nil, fmt.Errorf("claim outbox: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("claim outbox: %w", err)
	}
	return out, nil
}

// fanOut is what one fan-out writes: the newest row of each contact (in contact order), and the claimed
// rows a newer one of the same contact replaced.
type fanOut struct {
	newest, superseded []claimedUpsert
}

// fanOutQueueSQL queues each contact's newest version for every live destination of its workspace that
// has not received it, in contact order; a queued older version is replaced, and the item becomes due at
// once in the live lane.
const fanOutQueueSQL = `INSERT INTO sync_queue (destination_id, contact_id, workspace_id, version, outbox_id)
	SELECT d.id, x.contact, x.ws, x.version, x.outbox
	FROM unnest($1::uuid[], $2::bigint[], $3::bigint[], $4::bigint[]) AS x(contact, ws, version, outbox)
	JOIN destinations d ON d.workspace_id = x.ws AND d.deleted_at IS NULL
	WHERE NOT EXISTS (SELECT 1 FROM sync_state st WHERE st.destination_id = d.id AND st.contact_id = x.contact AND st.last_version >= x.version)
	ORDER BY x.contact, d.id
	ON CONFLICT (destination_id, contact_id) DO UPDATE SET version = EXCLUDED.version, outbox_id = EXCLUDED.outbox_id,
	  status = 'pending', attempts = 0, next_attempt_at = now(), last_error = '', lane = 0, bulk = false
	WHERE sync_queue.version < EXCLUDED.version`

// fanOutSupersedeSQL marks superseded the queued rows of older versions of the same contacts. Each contact
// is looked up on its own (LATERAL), in the order given (contact order), which is also the order its rows
// are locked in: a join the planner may turn around scans every crm_upsert row once per contact while its
// statistics lag behind a growing outbox.
const fanOutSupersedeSQL = `UPDATE outbox SET status = 'superseded' WHERE id IN (
		SELECT o.id FROM unnest($1::uuid[], $2::bigint[]) AS x(contact, version), LATERAL (
			SELECT id FROM outbox WHERE contact_id = x.contact AND kind = 'crm_upsert' AND status = 'queued' AND version < x.version
			ORDER BY id FOR UPDATE) o)`

// fanOutMarkSQL marks the claimed rows: superseded within the claim, queued, or skipped when the
// workspace has no destination (sent at once: there is nothing to deliver to).
const fanOutMarkSQL = `UPDATE outbox o SET status = m.status, sent_at = CASE WHEN m.status = 'skipped' THEN now() END
	FROM (SELECT x.id, CASE WHEN x.superseded THEN 'superseded'
			WHEN EXISTS (SELECT 1 FROM destinations d WHERE d.workspace_id = x.ws AND d.deleted_at IS NULL) THEN 'queued'
			ELSE 'skipped' END AS status
		FROM unnest($1::bigint[], $2::bigint[], $3::boolean[]) AS x(id, ws, superseded)) m
	WHERE o.id = m.id`

func (s *Store) writeFanOut(ctx context.Context, f fanOut) error {
	if err := s.queueNewest(ctx, f.newest); err != nil {
		return err
	}
	n := len(f.newest)
	ids, workspaces, superseded := make([]int64, n, n+len(f.superseded)), make([]int64, n, n+len(f.superseded)), make([]bool, n, n+len(f.superseded))
	for i, r := range f.newest {
		ids[i], workspaces[i] = r.id, r.workspaceID
	}
	for _, r := range f.superseded {
		ids, workspaces, superseded = append(ids, r.id), append(workspaces, r.workspaceID), append(superseded, true)
	}
	if _, err := s.pool().ExecContext(ctx, fanOutMarkSQL, ids, workspaces, superseded); err != nil {
		return fmt.Errorf("mark %d outbox rows: %w", len(ids), err)
	}
	return nil
}

// queueNewest queues each contact's newest crm_upsert row (given in contact order) for every live destination
// of its workspace and supersedes the contact's queued rows of older versions.
func (s *Store) queueNewest(ctx context.Context, newest []claimedUpsert) error {
	n := len(newest)
	if n == 0 {
		return nil
	}
	contacts, workspaces, versions, outboxIDs := make([]string, n), make([]int64, n), make([]int64, n), make([]int64, n)
	for i, r := range newest {
		contacts[i], workspaces[i], versions[i], outboxIDs[i] = r.contactID, r.workspaceID, r.version, r.id
	}
	if _, err := s.pool().ExecContext(ctx, fanOutQueueSQL, contacts, workspaces, versions, outboxIDs); err != nil {
		return fmt.Errorf("queue %d contacts: %w", n, err)
	}
	if _, err := s.pool().ExecContext(ctx, fanOutSupersedeSQL, contacts, versions); err != nil {
		return fmt.Errorf("supersede older versions: %w", err)
	}
	return nil
}

// SyncDueDestinations lists destinations with due, unleased work and not paused.
func (s *Store) SyncDueDestinations(ctx context.Context) ([]int64, error) {
	var ids []int64
	err := s.db.WithContext(ctx).Raw(`SELECT d.id FROM destinations d WHERE d.deleted_at IS NULL AND d.enabled AND NOT d.paused
		AND EXISTS (SELECT 1 FROM sync_queue q WHERE q.destination_id = d.id AND q.status = 'pending' AND q.next_attempt_at <= now()
		AND (q.lease_until IS NULL OR q.lease_until < now())) ORDER BY d.id`).Scan(&ids).Error
	if err != nil {
		return nil, fmt.Errorf("models: due destinations: %w", err)
	}
	return ids, nil
}

// AnyLane claims from every lane, live first.
const AnyLane = -1

// SyncClaim leases up to limit due items of a destination for lease, live lane first (then by due time),
// from lane only unless it is AnyLane. withBulk false leaves items marked for a bulk import to it (one
// runs alongside). A crashed sender's lease simply expires and the work is claimed again.
func (s *Store) SyncClaim(ctx context.Context, destinationID int64, limit int, lease time.Duration, withBulk bool, lane int) ([]SyncItem, error) {
	var out []SyncItem
	err := s.Tx(ctx, func(tx *Store) error {
		if err := tx.planInClaimOrder(ctx); err != nil {
			return err
		}
		return tx.db.WithContext(ctx).Raw(syncClaimSQL, lease.Seconds(), destinationID, withBulk, lane, lane, limit).Scan(&out).Error
	})
	if err != nil {
		return nil, fmt.Errorf("models: claim sync work of destination %d: %w", destinationID, err)
	}
	return out, nil
}

// syncClaimSQL leases a destination's due items in claim order (lane, due time, age).
const syncClaimSQL = `UPDATE sync_queue q SET lease_until = now() + make_interval(secs => ?)
	FROM (SELECT destination_id, contact_id FROM sync_queue
	      WHERE destination_id = ? AND status = 'pending' AND next_attempt_at <= now() AND (lease_until IS NULL OR lease_until < now())
	        AND (? OR NOT bulk) AND (? < 0 OR lane = ?)
	      ORDER BY lane, next_attempt_at, enqueued_at LIMIT ? FOR UPDATE SKIP LOCKED) c
	WHERE q.destination_id = c.destination_id AND q.contact_id = c.contact_id
	RETURNING q.destination_id, q.contact_id, q.workspace_id, q.version, q.outbox_id, q.attempts, q.dead_letter_id, q.enqueued_at, q.lane`

// planInClaimOrder makes this transaction read the queue in the claim-order index, which stops after the
// items it takes. While the queue's statistics lag behind its growth (this is the table a backlog grows
// in) the planner believed a destination had two items, took them all through another index and sorted
// them: 400 ms a claim of 20 at 300,000 queued, against 3 ms in index order.
func (s *Store) planInClaimOrder(ctx context.Context) error {
	return s.setPlanner(ctx, "claim", `SET LOCAL enable_sort = off; SET LOCAL enable_bitmapscan = off`)
}

// SyncRenewLease extends the lease of items still claimed (a sender still working on them), so that a
// batch slower than its lease (a long wait for the rate budget) is never claimed by a second sender while
// the first still sends it. Items already released, delivered or parked hold no lease and are left alone.
func (s *Store) SyncRenewLease(ctx context.Context, destinationID int64, contactIDs []string, lease time.Duration) error {
	if len(contactIDs) == 0 {
		return nil
	}
	// SKIP LOCKED: a row locked now is being delivered or released by its sender's own transaction, so it
	// needs no renewal, and waiting for it could deadlock against that transaction's lock order.
	err := s.db.WithContext(ctx).Exec(`UPDATE sync_queue q SET lease_until = now() + make_interval(secs => ?)
		FROM (SELECT destination_id, contact_id FROM sync_queue
		      WHERE destination_id = ? AND contact_id IN ? AND lease_until IS NOT NULL FOR UPDATE SKIP LOCKED) c
		WHERE q.destination_id = c.destination_id AND q.contact_id = c.contact_id`, lease.Seconds(), destinationID, contactIDs).Error
	if err != nil {
		return fmt.Errorf("models: renew lease of destination %d: %w", destinationID, err)
	}
	return nil
}

// SyncNextDue is when the destination's next pending item becomes due (zero time: none pending).
func (s *Store) SyncNextDue(ctx context.Context, destinationID int64) (time.Time, error) {
	var t sql.NullTime
	err := s.db.WithContext(ctx).Raw(`SELECT min(greatest(next_attempt_at, coalesce(lease_until, next_attempt_at))) FROM sync_queue
		WHERE destination_id = ? AND status = 'pending'`, destinationID).Scan(&t).Error
	if err != nil {
		return time.Time{}, fmt.Errorf("models: next due of destination %d: %w", destinationID, err)
	}
	return t.Time, nil // zero when nothing is pending
}

// SyncOutcome is a delivered item: what the destination now holds.
type SyncOutcome struct {
	ContactID string
	Version   int64
	RemoteID  string
	Written   map[string]string
	Conflicts []SyncConflict
}

// SyncDone records delivered items of one destination in one transaction: the sync state (remote id,
// written values, version), conflicts, the queue row (removed unless a newer version arrived meanwhile,
// in which case it becomes due again), any dead letter it was waiting on, and the outbox rows once no
// destination still needs them. One statement per table for the whole batch.
func (s *Store) SyncDone(ctx context.Context, destinationID int64, outs []SyncOutcome) error {
	outs = newestOutcomes(outs)
	if len(outs) == 0 {
		return nil
	}
	n := len(outs)
	contacts, remotes, written := make([]string, n), make([]string, n), make([]string, n)
	versions := make([]int64, n)
	var cContact, cField, cOurs, cRemote []string
	var cVersion []int64
	for i, o := range outs {
		w, err := json.Marshal(o.Written)
		if err != nil {
			return fmt.Errorf("models: sync done: encode written: %w", err)
		}
		contacts[i], remotes[i], written[i], versions[i] = o.ContactID, o.RemoteID, string(w), o.Version
		for _, c := range o.Conflicts {
			cContact, cField, cOurs, cRemote = append(cContact, o.ContactID), append(cField, c.Field), append(cOurs, c.OurLast), append(cRemote, c.Remote)
			cVersion = append(cVersion, o.Version)
		}
	}
	return s.Tx(ctx, func(tx *Store) error {
		if err := tx.PlanForBatch(ctx); err != nil {
			return err
		}
		db := tx.pool()
		if _, err := db.ExecContext(ctx, syncDoneStateSQL, destinationID, contacts, remotes, written, versions); err != nil {
			return fmt.Errorf("models: sync done: state: %w", err)
		}
		if len(cContact) > 0 {
			if _, err := db.ExecContext(ctx, `INSERT INTO sync_conflicts (destination_id, contact_id, field, our_last, remote, version)
				SELECT $1, x.contact, x.field, x.ours, x.remote, x.version
				FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::bigint[]) AS x(contact, field, ours, remote, version)`,
				destinationID, cContact, cField, cOurs, cRemote, cVersion); err != nil {
				return fmt.Errorf("models: sync done: conflicts: %w", err)
			}
		}
		if _, err := db.ExecContext(ctx, syncDoneLockQueueSQL, destinationID, contacts); err != nil {
			return fmt.Errorf("models: sync done: lock queue: %w", err)
		}
		deleted, err := tx.syncDequeue(ctx, destinationID, contacts, versions)
		if err != nil {
			return err
		}
		var released []string
		var dlIDs, dlVersions []int64
		for i, c := range contacts {
			dl, gone := deleted[c]
			switch {
			case !gone:
				released = append(released, c) // a newer version arrived meanwhile: due again at once
			case dl != nil:
				dlIDs, dlVersions = append(dlIDs, *dl), append(dlVersions, versions[i])
			}
		}
		if len(released) > 0 {
			if _, err := db.ExecContext(ctx, `UPDATE sync_queue SET lease_until = NULL, attempts = 0, next_attempt_at = now()
				WHERE destination_id = $1 AND contact_id = ANY($2::uuid[])`, destinationID, released); err != nil {
				return fmt.Errorf("models: sync done: release: %w", err)
			}
		}
		if len(dlIDs) > 0 {
			if _, err := db.ExecContext(ctx, `UPDATE dead_letters d SET status = 'replayed', resolved_at = now(), resolved_by = 'crm-sync',
				resolution = 'delivered version ' || x.version FROM unnest($1::bigint[], $2::bigint[]) AS x(id, version)
				WHERE d.id = x.id AND d.status = 'open'`, dlIDs, dlVersions); err != nil {
				return fmt.Errorf("models: sync done: resolve dead letters: %w", err)
			}
		}
		if _, err := db.ExecContext(ctx, syncDoneOutboxSQL, contacts, versions); err != nil {
			return fmt.Errorf("models: sync done: outbox: %w", err)
		}
		return nil
	})
}

// newestOutcomes keeps one outcome per contact (the newest version's), in contact order: every writer of
// queue and outbox rows locks them in contact order (see SyncFanOut).
func newestOutcomes(outs []SyncOutcome) []SyncOutcome {
	at := make(map[string]int, len(outs))
	out := make([]SyncOutcome, 0, len(outs))
	for _, o := range outs {
		if i, ok := at[o.ContactID]; ok {
			if o.Version >= out[i].Version {
				out[i] = o
			}
			continue
		}
		at[o.ContactID] = len(out)
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b SyncOutcome) int { return strings.Compare(a.ContactID, b.ContactID) })
	return out
}

const syncDoneStateSQL = `INSERT INTO sync_state (destination_id, contact_id, remote_id, written, last_version, synced_at)
	SELECT $1, x.contact, x.remote, x.written::jsonb, x.version, now()
	FROM unnest($2::uuid[], $3::text[], $4::text[], $5::bigint[]) AS x(contact, remote, written, version)
	ORDER BY x.contact
	ON CONFLICT (destination_id, contact_id) DO UPDATE SET remote_id = EXCLUDED.remote_id, written = EXCLUDED.written, in_doubt = NULL,
	  last_version = greatest(sync_state.last_version, EXCLUDED.last_version), synced_at = now()`

// syncDoneLockQueueSQL locks the batch's queue rows in contact order before they are removed or released.
const syncDoneLockQueueSQL = `SELECT 1 FROM sync_queue WHERE destination_id = $1 AND contact_id = ANY($2::uuid[])
	ORDER BY contact_id FOR UPDATE`

// syncDoneOutboxSQL marks sent the queued (or dead-lettered) crm_upsert rows the delivered versions cover,
// once no destination still holds work for the contact; each contact on its own, in the order given
// (contact order), like fanOutSupersedeSQL.
const syncDoneOutboxSQL = `UPDATE outbox SET status = 'sent', sent_at = now() WHERE id IN (
		SELECT o.id FROM unnest($1::uuid[], $2::bigint[]) AS x(contact, version), LATERAL (
			SELECT id FROM outbox WHERE contact_id = x.contact AND kind = 'crm_upsert' AND status IN ('queued', 'dead') AND version <= x.version
			  AND NOT EXISTS (SELECT 1 FROM sync_queue q WHERE q.contact_id = x.contact)
			ORDER BY id FOR UPDATE) o)`

// syncDequeue removes the queue rows the delivered versions cover and returns, for each contact removed,
// the dead letter its row waited on (nil: none).
func (s *Store) syncDequeue(ctx context.Context, destinationID int64, contacts []string, versions []int64) (map[string]*int64, error) {
	// The rows are found through the primary key with = ANY, which no planner estimate turns into a scan of
	// the destination's whole queue (a join with the arrays did, while statistics lagged behind the queue).
	rows, err := s.pool().QueryContext(ctx, `DELETE FROM sync_queue q
		WHERE q.destination_id = $1 AND q.contact_id = ANY($2::uuid[])
		  AND q.version <= ($3::bigint[])[array_position($2::uuid[], q.contact_id)]
		RETURNING q.contact_id::text, q.dead_letter_id`, destinationID, contacts, versions)
	if err != nil {
		return nil, fmt.Errorf("models: sync done: dequeue: %w", err)
	}
	defer rows.Close()
	out := map[string]*int64{}
	for rows.Next() {
		var c string
		var dl *int64
		if err := rows.Scan(&c, &dl); err != nil {
			return nil, fmt.Errorf("models: sync done: dequeue: %w", err)
		}
		out[c] = dl
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("models: sync done: dequeue: %w", err)
	}
	return out, nil
}

// SyncRelease hands items back without counting an attempt (a rate limit, a pause, a shutdown), due at at.
func (s *Store) SyncRelease(ctx context.Context, destinationID int64, contactIDs []string, at time.Time, lastError string) error {
	if len(contactIDs) == 0 {
		return nil
	}
	err := s.db.WithContext(ctx).Exec(`UPDATE sync_queue SET lease_until = NULL, next_attempt_at = ?, last_error = ?
		WHERE destination_id = ? AND contact_id IN ?`, at, lastError, destinationID, contactIDs).Error
	if err != nil {
		return fmt.Errorf("models: release sync work of destination %d: %w", destinationID, err)
	}
	return nil
}

// SyncRetryLater counts a failed attempt of one item and makes it due again at at.
func (s *Store) SyncRetryLater(ctx context.Context, destinationID int64, contactID string, at time.Time, lastError string) error {
	err := s.db.WithContext(ctx).Exec(`UPDATE sync_queue SET lease_until = NULL, next_attempt_at = ?, attempts = attempts + 1, last_error = ?
		WHERE destination_id = ? AND contact_id = ?`, at, syncTruncate(lastError), destinationID, contactID).Error
	if err != nil {
		return fmt.Errorf("models: retry sync work: %w", err)
	}
	return nil
}

// SyncDeadLetterPayload is the payload of a CRM dead letter: replaying it sends the contact's current
// desired state to this destination, never this payload.
type SyncDeadLetterPayload struct {
	DestinationID int64  `json:"destination_id"`
	Destination   string `json:"destination"`
	ContactID     string `json:"contact_id"`
	Version       int64  `json:"version"`
	Class         string `json:"class"`
	Status        int    `json:"status,omitempty"`
	Error         string `json:"error"`
}

// SyncDeadLetter parks an item behind a dead letter of kind ("transient" or "invalid_mapping"). When the
// item already waits on an open dead letter (a scheduler retry that failed again) that one is updated:
// its attempts grow and nextRetry is set; otherwise a new one is opened. It returns the dead letter id and
// whether it is new.
func (s *Store) SyncDeadLetter(ctx context.Context, item SyncItem, kind, reason string, nextRetry *time.Time, p SyncDeadLetterPayload) (int64, bool, error) {
	var id int64
	created := false
	err := s.Tx(ctx, func(tx *Store) error {
		db := tx.db.WithContext(ctx)
		payload, err := json.Marshal(p)
		if err != nil {
			return err
		}
		var open []int64
		if item.DeadLetterID != nil {
			if err := db.Raw(`UPDATE dead_letters SET attempts = attempts + 1, reason = ?, payload = ?,
				next_retry_at = ?
				WHERE id = ? AND status = 'open' AND kind = ? RETURNING id`, syncTruncate(reason), payload, nextRetry, *item.DeadLetterID, kind).Scan(&open).Error; err != nil {
				return fmt.Errorf("update dead letter: %w", err)
			}
		}
		if len(open) > 0 {
			id = open[0]
		} else {
			cid := item.ContactID
			if id, err = tx.DeadLetterAdd(ctx, DeadLetter{WorkspaceID: item.WorkspaceID, Kind: kind, Reason: syncTruncate(reason),
				ContactID: &cid, OutboxID: item.OutboxID, Payload: payload, NextRetryAt: nextRetry}); err != nil {
				return err
			}
			created = true
		}
		if err := db.Exec(`UPDATE sync_queue SET status = 'dead', dead_letter_id = ?, lease_until = NULL, last_error = ?
			WHERE destination_id = ? AND contact_id = ?`, id, syncTruncate(reason), item.DestinationID, item.ContactID).Error; err != nil {
			return fmt.Errorf("park sync work: %w", err)
		}
		return db.Exec(`UPDATE outbox SET status = 'dead' WHERE kind = 'crm_upsert' AND contact_id = ? AND status = 'queued'`, item.ContactID).Error
	})
	if err != nil {
		return 0, false, fmt.Errorf("models: sync dead letter: %w", err)
	}
	return id, created, nil
}

// SyncDeadLetterAttempts returns how many scheduler retries an open dead letter has had.
func (s *Store) SyncDeadLetterAttempts(ctx context.Context, id int64) (int, error) {
	var n int
	err := s.db.WithContext(ctx).Raw(`SELECT attempts FROM dead_letters WHERE id = ?`, id).Scan(&n).Error
	if err != nil {
		return 0, fmt.Errorf("models: dead letter attempts: %w", err)
	}
	return n, nil
}

// SyncRetryDueDeadLetters revives the work behind open transient CRM dead letters whose retry time has
// come (the scheduler's 20 min, 40, 80 … retries). It returns how many items became due.
func (s *Store) SyncRetryDueDeadLetters(ctx context.Context) (int64, error) {
	res := s.db.WithContext(ctx).Exec(`UPDATE sync_queue q SET status = 'pending', attempts = 0, next_attempt_at = now(), lease_until = NULL
		FROM dead_letters d WHERE d.id = q.dead_letter_id AND q.status = 'dead' AND d.status = 'open' AND d.kind = 'transient'
		AND d.next_retry_at IS NOT NULL AND d.next_retry_at <= now()`)
	if res.Error != nil {
		return 0, fmt.Errorf("models: retry due CRM dead letters: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// SyncRequeue queues a contact's current desired state for a destination (a resync or a replay). The
// relay reads the contact when it sends, so what goes out is always the current state.
func (s *Store) SyncRequeue(ctx context.Context, destinationID int64, contactID string) error {
	err := s.db.WithContext(ctx).Exec(`INSERT INTO sync_queue (destination_id, contact_id, workspace_id, version)
		SELECT d.id, c.id, c.workspace_id, c.version FROM destinations d JOIN contacts c ON c.workspace_id = d.workspace_id
		WHERE d.id = ? AND c.id = ? AND c.merged_into IS NULL
		ON CONFLICT (destination_id, contact_id) DO UPDATE SET version = greatest(sync_queue.version, EXCLUDED.version),
		  status = 'pending', attempts = 0, next_attempt_at = now(), lease_until = NULL`, destinationID, contactID).Error
	if err != nil {
		return fmt.Errorf("models: requeue contact %s: %w", contactID, err)
	}
	return nil
}

// SyncRequeueAll queues every live contact of the destination's workspace in the backfill lane (an item
// already waiting in the live lane stays there); it returns how many.
func (s *Store) SyncRequeueAll(ctx context.Context, destinationID int64) (int64, error) {
	res := s.db.WithContext(ctx).Exec(`INSERT INTO sync_queue (destination_id, contact_id, workspace_id, version, lane)
		SELECT d.id, c.id, c.workspace_id, c.version, 1 FROM destinations d JOIN contacts c ON c.workspace_id = d.workspace_id
		WHERE d.id = ? AND c.merged_into IS NULL
		ON CONFLICT (destination_id, contact_id) DO UPDATE SET version = greatest(sync_queue.version, EXCLUDED.version),
		  status = 'pending', attempts = 0, next_attempt_at = now(), lease_until = NULL, lane = least(sync_queue.lane, EXCLUDED.lane)`, destinationID)
	if res.Error != nil {
		return 0, fmt.Errorf("models: requeue destination %d: %w", destinationID, res.Error)
	}
	return res.RowsAffected, nil
}

// SyncDrop removes an item that has nothing to send (its contact was merged away or deleted).
func (s *Store) SyncDrop(ctx context.Context, destinationID int64, contactID string) error {
	if err := s.db.WithContext(ctx).Exec(`DELETE FROM sync_queue WHERE destination_id = ? AND contact_id = ?`, destinationID, contactID).Error; err != nil {
		return fmt.Errorf("models: drop sync work: %w", err)
	}
	return nil
}

func syncTruncate(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "…"
	}
	return s
}

// SyncDropDestination removes a deleted destination's queued work (its open dead letters stay for review).
func (s *Store) SyncDropDestination(ctx context.Context, destinationID int64) error {
	if err := s.db.WithContext(ctx).Exec(`DELETE FROM sync_queue WHERE destination_id = ?`, destinationID).Error; err != nil {
		return fmt.Errorf("models: drop work of destination %d: %w", destinationID, err)
	}
	return nil
}
