-- +goose Up
-- Resync and backfill work marked for a CRM's bulk import (ActiveCampaign's asynchronous importer): the
-- relay sends marked items 10 to 250 at a time through it; live changes stay on per-contact writes.
ALTER TABLE sync_queue ADD COLUMN bulk boolean NOT NULL DEFAULT false;
CREATE INDEX sync_queue_bulk ON sync_queue (destination_id, next_attempt_at) WHERE status = 'pending' AND bulk;

-- +goose Down
DROP INDEX sync_queue_bulk;
ALTER TABLE sync_queue DROP COLUMN bulk;
