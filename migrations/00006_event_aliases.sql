-- +goose Up
-- An event spooled while Postgres was unreachable keeps the id it was
-- acknowledged with. When its replay finds that the same idempotency key was
-- stored meanwhile (an insert whose commit reply was lost, or a retry answered
-- after Redis lost its keys), the acknowledged id becomes an alias of the
-- stored event, so a sender's id always leads to the event.
CREATE TABLE event_aliases (
    alias_id     uuid PRIMARY KEY,
    event_id     uuid NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    workspace_id bigint NOT NULL REFERENCES workspaces (id),
    created_at   timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE event_aliases;
