-- +goose Up
-- A priority lane per queued item: live leads' writes (lane 0) are claimed before resync, import and
-- backfill work (lane 1), whatever their due times, so a new lead is not stuck behind a whole-destination
-- resync. A live change to an item waiting in lane 1 moves it to lane 0.
ALTER TABLE sync_queue ADD COLUMN lane smallint NOT NULL DEFAULT 0 CHECK (lane IN (0, 1));
CREATE INDEX sync_queue_lane_due ON sync_queue (destination_id, lane, next_attempt_at) WHERE status = 'pending';

-- +goose Down
DROP INDEX sync_queue_lane_due;
ALTER TABLE sync_queue DROP COLUMN lane;
