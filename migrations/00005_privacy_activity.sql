-- +goose Up
-- Erasure keeps the contact row (so counts and stage history stay whole) but
-- strips every personal field; erased_at marks it.
ALTER TABLE contacts ADD COLUMN erased_at timestamptz;

-- Per-source activity (last event, silence checks) without scanning a workspace.
CREATE INDEX events_source_received ON events (source_id, received_at DESC);

-- +goose Down
DROP INDEX events_source_received;
ALTER TABLE contacts DROP COLUMN erased_at;
