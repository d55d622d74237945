-- +goose Up
-- Workspaces scope everything: an agency runs one per client.
CREATE TABLE workspaces (
    id          bigserial PRIMARY KEY,
    slug        text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
    name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    archived_at timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
INSERT INTO workspaces (slug, name) VALUES ('default', 'Default');

CREATE TABLE users (
    id                   bigserial PRIMARY KEY,
    email                text NOT NULL UNIQUE,
    password_hash        text NOT NULL,
    role                 text NOT NULL CHECK (role IN ('admin', 'editor', 'viewer')),
    must_change_password boolean NOT NULL DEFAULT false,
    disabled_at          timestamptz,
    last_login_at        timestamptz,
    created_at           timestamptz NOT NULL DEFAULT now()
);

-- API tokens are stored as SHA-256 hashes; the plaintext is shown once.
CREATE TABLE api_tokens (
    id           bigserial PRIMARY KEY,
    name         text NOT NULL,
    role         text NOT NULL CHECK (role IN ('admin', 'editor', 'viewer')),
    token_hash   bytea NOT NULL UNIQUE,
    prefix       text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz
);

CREATE TABLE sources (
    id                    bigserial PRIMARY KEY,
    workspace_id          bigint NOT NULL REFERENCES workspaces (id),
    name                  text NOT NULL,
    kind                  text NOT NULL,
    channel               text NOT NULL DEFAULT '',
    -- token is the unguessable path segment of the ingest URL.
    token                 text NOT NULL UNIQUE,
    secret_enc            bytea,
    previous_secret_enc   bytea,
    previous_secret_until timestamptz,
    -- config: verification settings (no secrets), mapping overrides, default region, event stages, dedupe fields.
    config                jsonb NOT NULL DEFAULT '{}',
    enabled               boolean NOT NULL DEFAULT true,
    deleted_at            timestamptz,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sources_workspace ON sources (workspace_id);

-- The inbox: one row per unique accepted event. Its id is minted by leadgate
-- (UUIDv7) so that an event spooled while Postgres is down keeps the id it was acknowledged with.
CREATE TABLE events (
    id              uuid PRIMARY KEY,
    workspace_id    bigint NOT NULL REFERENCES workspaces (id),
    source_id       bigint NOT NULL REFERENCES sources (id),
    idempotency_key text NOT NULL,
    content_hash    text,
    event_type      text NOT NULL DEFAULT '',
    channel         text NOT NULL DEFAULT '',
    occurred_at     timestamptz NOT NULL,
    received_at     timestamptz NOT NULL DEFAULT now(),
    email           text,
    email_raw       text,
    email_problem   text,
    phone           text,
    phone_raw       text,
    phone_problem   text,
    first_name      text,
    last_name       text,
    company         text,
    target_stage    text,
    current_stage   text,
    fields          jsonb NOT NULL DEFAULT '{}',
    attribution     jsonb NOT NULL DEFAULT '{}',
    hydration       jsonb,
    rule_overrides  jsonb,
    payload         jsonb,
    content_type    text NOT NULL DEFAULT '',
    -- status: pending | waiting | retrying | applied | unchanged | quarantined | rejected | dropped
    status          text NOT NULL DEFAULT 'pending',
    reason          text NOT NULL DEFAULT '',
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz,
    contact_id      uuid,
    processed_at    timestamptz,
    spooled         boolean NOT NULL DEFAULT false
);
CREATE INDEX events_workspace_received ON events (workspace_id, received_at DESC, id DESC);
CREATE INDEX events_workspace_status ON events (workspace_id, status);
CREATE INDEX events_unresolved ON events (received_at) WHERE status IN ('pending', 'waiting', 'retrying');
CREATE INDEX events_content_hash ON events (workspace_id, content_hash, received_at DESC) WHERE content_hash IS NOT NULL;

-- Idempotency records are the truth for "seen before": one row per key per workspace.
CREATE TABLE idempotency_keys (
    workspace_id bigint NOT NULL REFERENCES workspaces (id),
    key          text NOT NULL,
    event_id     uuid NOT NULL,
    source_id    bigint NOT NULL,
    duplicates   integer NOT NULL DEFAULT 0,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- Every configuration change and operator action: who, when, before, after.
CREATE TABLE audit_log (
    id           bigserial PRIMARY KEY,
    workspace_id bigint REFERENCES workspaces (id),
    actor        text NOT NULL,
    action       text NOT NULL,
    subject_type text NOT NULL,
    subject_id   text NOT NULL DEFAULT '',
    before       jsonb,
    after        jsonb,
    at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_log_workspace_at ON audit_log (workspace_id, at DESC);

-- +goose Down
DROP TABLE audit_log;
DROP TABLE idempotency_keys;
DROP TABLE events;
DROP TABLE sources;
DROP TABLE api_tokens;
DROP TABLE users;
DROP TABLE workspaces;
