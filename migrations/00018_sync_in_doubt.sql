-- +goose Up
-- What leadgate sent a destination in writes whose answer never came (a timeout, a 5xx, a request cut
-- off by a shutdown), per contact: the CRM may hold these values, so the next write does not take them
-- for a person's edit. Cleared by the next delivered write.
ALTER TABLE sync_state ADD COLUMN in_doubt jsonb;

-- +goose Down
ALTER TABLE sync_state DROP COLUMN in_doubt;
