-- +goose Up
-- CRM destinations per workspace. Credentials are sealed with LEADGATE_SECRET_KEY (secretbox) and never
-- returned by the API. Counters are kept here so /stats agrees across replicas.
CREATE TABLE destinations (
    id              bigserial PRIMARY KEY,
    workspace_id    bigint NOT NULL REFERENCES workspaces (id),
    name            text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    kind            text NOT NULL CHECK (kind IN ('activecampaign', 'hubspot', 'gohighlevel', 'sandbox')),
    base_url        text NOT NULL DEFAULT '',
    api_token_enc   bytea,
    -- config: stage_field, stage_mode, pipeline, location_id, field_map, stage_map, loop_field, sync_field,
    -- webhook_url and the sandbox's own behaviour (its rate limit, injected 429/503, latency).
    config          jsonb NOT NULL DEFAULT '{}',
    rate_limit_rps  integer NOT NULL DEFAULT 0 CHECK (rate_limit_rps >= 0),
    batch_size      integer NOT NULL DEFAULT 20 CHECK (batch_size BETWEEN 1 AND 100),
    enabled         boolean NOT NULL DEFAULT true,
    -- paused: work is held (nothing dropped) until resumed. pause_episode numbers pauses so that each
    -- pause alerts exactly once.
    paused          boolean NOT NULL DEFAULT false,
    paused_reason   text NOT NULL DEFAULT '',
    paused_at       timestamptz,
    pause_episode   integer NOT NULL DEFAULT 0,
    calls_total     bigint NOT NULL DEFAULT 0,
    rate_limited    bigint NOT NULL DEFAULT 0,
    failures_total  bigint NOT NULL DEFAULT 0,
    synced_total    bigint NOT NULL DEFAULT 0,
    last_sync_at    timestamptz,
    last_error      text NOT NULL DEFAULT '',
    deleted_at      timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX destinations_workspace ON destinations (workspace_id) WHERE deleted_at IS NULL;

-- The default workspace starts with the built-in sandbox CRM (DESIGN.md "The embedded default").
INSERT INTO destinations (workspace_id, name, kind, rate_limit_rps, batch_size)
SELECT id, 'Sandbox', 'sandbox', 5, 20 FROM workspaces WHERE slug = 'default';

-- Work per destination and contact: the outbox's crm_upsert rows fanned out and coalesced (one row per
-- contact holding the newest desired version). status 'dead' rows wait on a dead letter.
CREATE TABLE sync_queue (
    destination_id  bigint NOT NULL REFERENCES destinations (id),
    contact_id      uuid NOT NULL,
    workspace_id    bigint NOT NULL REFERENCES workspaces (id),
    version         bigint NOT NULL,
    outbox_id       bigint,
    status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'dead')),
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    lease_until     timestamptz,
    last_error      text NOT NULL DEFAULT '',
    dead_letter_id  bigint,
    enqueued_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (destination_id, contact_id)
);
CREATE INDEX sync_queue_due ON sync_queue (destination_id, next_attempt_at) WHERE status = 'pending';
CREATE INDEX sync_queue_contact ON sync_queue (contact_id);
CREATE INDEX sync_queue_workspace ON sync_queue (workspace_id) WHERE status = 'pending';

-- What each destination holds for each contact: the remote id, what leadgate last wrote (crm.Result.Written,
-- fed back as crm.Contact.Previous) and the last desired version delivered.
CREATE TABLE sync_state (
    destination_id bigint NOT NULL REFERENCES destinations (id),
    contact_id     uuid NOT NULL,
    remote_id      text NOT NULL DEFAULT '',
    written        jsonb NOT NULL DEFAULT '{}',
    last_version   bigint NOT NULL DEFAULT 0,
    synced_at      timestamptz,
    imported       boolean NOT NULL DEFAULT false,
    PRIMARY KEY (destination_id, contact_id)
);
CREATE INDEX sync_state_remote ON sync_state (destination_id, remote_id);

-- Human (or other integration) edits in the CRM that leadgate did not overwrite.
CREATE TABLE sync_conflicts (
    id             bigserial PRIMARY KEY,
    destination_id bigint NOT NULL REFERENCES destinations (id),
    contact_id     uuid NOT NULL,
    field          text NOT NULL,
    our_last       text NOT NULL,
    remote         text NOT NULL,
    version        bigint NOT NULL DEFAULT 0,
    observed_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sync_conflicts_destination ON sync_conflicts (destination_id, id DESC);
CREATE INDEX sync_conflicts_contact ON sync_conflicts (contact_id, id DESC);

-- The drift check's latest findings: fields whose CRM value differs from what leadgate last wrote.
CREATE TABLE sync_drift (
    destination_id bigint NOT NULL REFERENCES destinations (id),
    contact_id     uuid NOT NULL,
    field          text NOT NULL,
    written        text NOT NULL,
    remote         text NOT NULL,
    checked_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (destination_id, contact_id, field)
);

-- Initial imports of a CRM's existing contacts.
CREATE TABLE sync_imports (
    id             bigserial PRIMARY KEY,
    destination_id bigint NOT NULL REFERENCES destinations (id),
    status         text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'done', 'failed')),
    seen           integer NOT NULL DEFAULT 0,
    created        integer NOT NULL DEFAULT 0,
    linked         integer NOT NULL DEFAULT 0,
    error          text NOT NULL DEFAULT '',
    started_by     text NOT NULL DEFAULT '',
    started_at     timestamptz NOT NULL DEFAULT now(),
    finished_at    timestamptz
);

-- Where side effects go when no CRM-native action handles them: a generic webhook per workspace.
CREATE TABLE side_effect_webhooks (
    id           bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL UNIQUE REFERENCES workspaces (id),
    url          text NOT NULL,
    secret_enc   bytea,
    enabled      boolean NOT NULL DEFAULT true,
    updated_at   timestamptz NOT NULL DEFAULT now()
);

-- Provider credentials for hydration (Meta page token, HubSpot token), sealed like destination tokens.
CREATE TABLE hydration_providers (
    id             bigserial PRIMARY KEY,
    workspace_id   bigint NOT NULL REFERENCES workspaces (id),
    provider       text NOT NULL CHECK (provider IN ('meta', 'hubspot')),
    token_enc      bytea NOT NULL,
    base_url       text NOT NULL DEFAULT '',
    rate_limit_rps integer NOT NULL DEFAULT 0,
    updated_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, provider)
);

-- The built-in sandbox CRM: contacts, its own field values and stages, and the native actions it ran.
CREATE TABLE sandbox_contacts (
    id             bigserial PRIMARY KEY,
    destination_id bigint NOT NULL REFERENCES destinations (id),
    email          text,
    phone          text,
    first_name     text NOT NULL DEFAULT '',
    last_name      text NOT NULL DEFAULT '',
    company        text NOT NULL DEFAULT '',
    stage          text NOT NULL DEFAULT '',
    fields         jsonb NOT NULL DEFAULT '{}',
    tags           jsonb NOT NULL DEFAULT '[]',
    notes          jsonb NOT NULL DEFAULT '[]',
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX sandbox_contacts_email ON sandbox_contacts (destination_id, lower(email)) WHERE email IS NOT NULL;
CREATE INDEX sandbox_contacts_phone ON sandbox_contacts (destination_id, phone) WHERE phone IS NOT NULL;

CREATE TABLE sandbox_actions (
    id             bigserial PRIMARY KEY,
    destination_id bigint NOT NULL REFERENCES destinations (id),
    stable_id      text NOT NULL,
    contact_id     uuid,
    action         text NOT NULL,
    params         jsonb NOT NULL DEFAULT '{}',
    at             timestamptz NOT NULL DEFAULT now(),
    UNIQUE (destination_id, stable_id)
);

CREATE INDEX outbox_pending_kind ON outbox (kind, id) WHERE status = 'pending';

-- +goose Down
DROP INDEX outbox_pending_kind;
DROP TABLE sandbox_actions;
DROP TABLE sandbox_contacts;
DROP TABLE hydration_providers;
DROP TABLE side_effect_webhooks;
DROP TABLE sync_imports;
DROP TABLE sync_drift;
DROP TABLE sync_conflicts;
DROP TABLE sync_state;
DROP TABLE sync_queue;
DROP TABLE destinations;
