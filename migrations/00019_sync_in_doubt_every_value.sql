-- +goose Up
-- in_doubt keeps every value sent per field in writes whose answer never came, not only the latest: of two
-- failed writes in a row the first may have reached the CRM and the second not. Each field's single value
-- becomes a one-value list.
UPDATE sync_state SET in_doubt = (SELECT jsonb_object_agg(key, jsonb_build_array(value)) FROM jsonb_each(in_doubt))
WHERE in_doubt IS NOT NULL AND in_doubt <> '{}'::jsonb;

-- +goose Down
UPDATE sync_state SET in_doubt = (SELECT jsonb_object_agg(key, value -> -1) FROM jsonb_each(in_doubt))
WHERE in_doubt IS NOT NULL AND in_doubt <> '{}'::jsonb;
