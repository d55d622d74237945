-- +goose Up
-- Every event ingest stores paid a foreign-key trigger query on its source (a lookup and a share lock
-- of the source's row): measured at 2,000 deliveries/s on two cores, four of the 30 buffer pages the
-- group insert touched per event, and 2–19 % of its time. Sources are never deleted (deleting one sets
-- deleted_at and keeps the row, so its events keep their provenance), and ingest takes every event's
-- source from a row it read, so the key guards nothing that can happen.
ALTER TABLE events DROP CONSTRAINT events_source_id_fkey;

-- +goose Down
ALTER TABLE events ADD CONSTRAINT events_source_id_fkey FOREIGN KEY (source_id) REFERENCES sources (id);
