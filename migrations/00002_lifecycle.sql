-- +goose Up
-- Stage rules are versioned: every save is a new row; the highest version is in force.
CREATE TABLE stage_rules (
    workspace_id bigint NOT NULL REFERENCES workspaces (id),
    version      integer NOT NULL,
    rules        jsonb NOT NULL,
    created_by   text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, version)
);

-- One real person -> one contact per workspace (normalized email / E.164 phone).
CREATE TABLE contacts (
    id               uuid PRIMARY KEY,
    workspace_id     bigint NOT NULL REFERENCES workspaces (id),
    email            text,
    phone            text,
    phone_shared     boolean NOT NULL DEFAULT false,
    phone_verified   boolean NOT NULL DEFAULT false,
    first_name       text,
    last_name        text,
    company          text,
    stage            text NOT NULL DEFAULT '',
    stage_entered_at timestamptz,
    fields           jsonb NOT NULL DEFAULT '{}',
    first_touch      jsonb NOT NULL DEFAULT '{}',
    tags             jsonb NOT NULL DEFAULT '[]',
    score            integer NOT NULL DEFAULT 0,
    score_breakdown  jsonb NOT NULL DEFAULT '[]',
    submission_count integer NOT NULL DEFAULT 0,
    first_seen_at    timestamptz NOT NULL,
    last_activity_at timestamptz NOT NULL,
    version          bigint NOT NULL DEFAULT 1,
    merged_into      uuid REFERENCES contacts (id),
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX contacts_email ON contacts (workspace_id, email) WHERE email IS NOT NULL AND merged_into IS NULL;
CREATE UNIQUE INDEX contacts_phone ON contacts (workspace_id, phone) WHERE phone IS NOT NULL AND merged_into IS NULL AND NOT phone_shared;
CREATE INDEX contacts_stage ON contacts (workspace_id, stage) WHERE merged_into IS NULL;
CREATE INDEX contacts_workspace_created ON contacts (workspace_id, created_at DESC, id DESC);

CREATE INDEX events_contact ON events (contact_id, occurred_at) WHERE contact_id IS NOT NULL;
CREATE INDEX events_unresolved_email ON events (workspace_id, email) WHERE status IN ('pending', 'waiting', 'retrying');
CREATE INDEX events_unresolved_phone ON events (workspace_id, phone) WHERE status IN ('pending', 'waiting', 'retrying');

CREATE TABLE stage_history (
    id           bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces (id),
    contact_id   uuid NOT NULL REFERENCES contacts (id),
    from_stage   text NOT NULL,
    to_stage     text NOT NULL,
    event_id     uuid,
    rule_version integer NOT NULL DEFAULT 0,
    actor        text NOT NULL,
    reason       text NOT NULL DEFAULT '',
    occurred_at  timestamptz NOT NULL,
    at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX stage_history_contact ON stage_history (contact_id, id);

-- Every proposed field value with its provenance; the contact's value is derived by precedence.
CREATE TABLE observations (
    id              bigserial PRIMARY KEY,
    workspace_id    bigint NOT NULL REFERENCES workspaces (id),
    contact_id      uuid NOT NULL REFERENCES contacts (id),
    field           text NOT NULL,
    value           text NOT NULL,
    source          text NOT NULL,
    observed_at     timestamptz NOT NULL,
    basis           text NOT NULL DEFAULT '',
    human           boolean NOT NULL DEFAULT false,
    explicit_delete boolean NOT NULL DEFAULT false,
    event_id        uuid,
    actor           text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX observations_once_per_event ON observations (contact_id, field, event_id) WHERE event_id IS NOT NULL;
CREATE INDEX observations_contact ON observations (contact_id, field);

-- Transactional outbox: CRM intents and side effects written with the change that caused them.
CREATE TABLE outbox (
    id              bigserial PRIMARY KEY,
    workspace_id    bigint NOT NULL REFERENCES workspaces (id),
    contact_id      uuid,
    kind            text NOT NULL CHECK (kind IN ('crm_upsert', 'side_effect', 'alert')),
    stable_id       text NOT NULL,
    version         bigint NOT NULL DEFAULT 0,
    action          text NOT NULL DEFAULT '',
    payload         jsonb NOT NULL,
    status          text NOT NULL DEFAULT 'pending',
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_error      text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL DEFAULT now(),
    sent_at         timestamptz
);
CREATE UNIQUE INDEX outbox_stable_id ON outbox (workspace_id, stable_id);
CREATE INDEX outbox_due ON outbox (next_attempt_at) WHERE status = 'pending';
CREATE INDEX outbox_contact ON outbox (contact_id, kind, version DESC);

-- Everything quarantined or failed, with its payload, its reason and a way to replay or discard it.
CREATE TABLE dead_letters (
    id            bigserial PRIMARY KEY,
    workspace_id  bigint NOT NULL REFERENCES workspaces (id),
    kind          text NOT NULL,
    reason        text NOT NULL,
    status        text NOT NULL DEFAULT 'open',
    event_id      uuid,
    contact_id    uuid,
    outbox_id     bigint,
    source_id     bigint,
    payload       jsonb,
    attempts      integer NOT NULL DEFAULT 0,
    next_retry_at timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    resolved_at   timestamptz,
    resolved_by   text,
    resolution    text
);
CREATE INDEX dead_letters_workspace ON dead_letters (workspace_id, status, id DESC);
CREATE UNIQUE INDEX dead_letters_open_event ON dead_letters (event_id) WHERE event_id IS NOT NULL AND status = 'open';

-- +goose Down
DROP TABLE dead_letters;
DROP TABLE outbox;
DROP TABLE observations;
DROP TABLE stage_history;
DROP INDEX events_unresolved_phone;
DROP INDEX events_unresolved_email;
DROP INDEX events_contact;
DROP TABLE contacts;
DROP TABLE stage_rules;
