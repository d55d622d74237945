-- +goose Up
-- Erasure keeps the contact row (so counts and stage history stay whole) but
-- strips every personal field; erased_at marks it.
ALTER TABLE contacts ADD COLUMN erased_at timestamptz;

-- +goose Down
ALTER TABLE contacts DROP COLUMN erased_at;
