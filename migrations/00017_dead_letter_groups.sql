-- +goose Up
-- A looping contact's breaker holds every further event: one dead letter per contact and breaker trip
-- holds them all (event_ids, event_count, last_seen_at), instead of one identical row per event. For every
-- other dead letter event_ids is its one event and event_count is 1.
ALTER TABLE dead_letters
    ADD COLUMN event_ids    uuid[] NOT NULL DEFAULT '{}',
    ADD COLUMN event_count  integer NOT NULL DEFAULT 1,
    ADD COLUMN last_seen_at timestamptz,
    ADD COLUMN breaker_trip integer;
UPDATE dead_letters SET last_seen_at = created_at, event_ids = CASE WHEN event_id IS NULL THEN '{}' ELSE ARRAY[event_id] END;
ALTER TABLE dead_letters ALTER COLUMN last_seen_at SET DEFAULT now(), ALTER COLUMN last_seen_at SET NOT NULL;

-- Fold the open loop dead letters a contact already has into its oldest one, and close the others
-- (their events now belong to the survivor, so nothing is lost and nothing is replayed twice).
WITH groups AS (
    SELECT workspace_id, contact_id, min(id) AS keep, array_agg(event_id ORDER BY id) FILTER (WHERE event_id IS NOT NULL) AS ids,
           count(*) AS n, max(created_at) AS last
    FROM dead_letters WHERE kind = 'loop_suspected' AND status = 'open' AND contact_id IS NOT NULL
    GROUP BY workspace_id, contact_id
), kept AS (
    UPDATE dead_letters d SET event_ids = COALESCE(g.ids, '{}'), event_count = g.n, last_seen_at = g.last,
        breaker_trip = COALESCE((SELECT b.trips FROM circuit_breakers b WHERE b.workspace_id = g.workspace_id AND b.contact_id = g.contact_id), 0)
    FROM groups g WHERE d.id = g.keep
    RETURNING d.id, d.workspace_id, d.contact_id
)
UPDATE dead_letters d SET status = 'discarded', resolved_at = now(), resolved_by = 'migration', resolution = 'folded into dead letter #' || k.id
FROM kept k
WHERE d.workspace_id = k.workspace_id AND d.contact_id = k.contact_id AND d.kind = 'loop_suspected' AND d.status = 'open' AND d.id <> k.id;

CREATE UNIQUE INDEX dead_letters_open_loop ON dead_letters (workspace_id, contact_id, breaker_trip)
    WHERE kind = 'loop_suspected' AND status = 'open' AND breaker_trip IS NOT NULL;
-- Retention keeps the payload of every event an open dead letter holds.
CREATE INDEX dead_letters_open_event_ids ON dead_letters USING gin (event_ids) WHERE status = 'open';

-- +goose Down
DROP INDEX dead_letters_open_event_ids;
DROP INDEX dead_letters_open_loop;
ALTER TABLE dead_letters DROP COLUMN breaker_trip, DROP COLUMN last_seen_at, DROP COLUMN event_count, DROP COLUMN event_ids;
