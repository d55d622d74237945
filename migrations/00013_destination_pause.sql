-- +goose Up
-- A destination paused by a fault of its own (refused credentials, a missing field, a spent daily
-- quota) is resumed by the scheduler's probe once the fault is gone; an operator's pause never is. The
-- cause says which, paused_until when a quota resets, and the last automatic resume lets a fault the
-- probe cannot see (it passes, the writes fail again) back off instead of alerting every probe.
ALTER TABLE destinations
    ADD COLUMN pause_cause text NOT NULL DEFAULT '',
    ADD COLUMN paused_until timestamptz,
    ADD COLUMN auto_resumed_at timestamptz,
    ADD COLUMN auto_resumed_reason text NOT NULL DEFAULT '';

UPDATE destinations SET pause_cause = CASE
        WHEN paused_reason LIKE 'auth:%' THEN 'auth'
        WHEN paused_reason LIKE 'blocked:%' THEN 'blocked'
        WHEN paused_reason LIKE 'runaway:%' THEN 'runaway'
        ELSE 'operator' END
    WHERE paused;

-- +goose Down
ALTER TABLE destinations DROP COLUMN pause_cause, DROP COLUMN paused_until, DROP COLUMN auto_resumed_at,
    DROP COLUMN auto_resumed_reason;
