-- +goose Up
-- Guards: source filters, the loop breaker, silence and health alarms, alert channels.

-- One row per workspace; absent means every default applies. loop and alerting
-- are typed in Go (models.LoopSettings, models.AlertingSettings) and validated there.
CREATE TABLE guard_settings (
    workspace_id bigint PRIMARY KEY REFERENCES workspaces (id),
    loop         jsonb NOT NULL DEFAULT '{}',
    alerting     jsonb NOT NULL DEFAULT '{}',
    updated_by   text NOT NULL DEFAULT '',
    updated_at   timestamptz NOT NULL DEFAULT now()
);

-- A source's filter rule set, replaced as a whole and versioned so caches can tell it changed.
CREATE TABLE source_filters (
    source_id    bigint PRIMARY KEY REFERENCES sources (id),
    workspace_id bigint NOT NULL REFERENCES workspaces (id),
    rules        jsonb NOT NULL DEFAULT '[]',
    version      integer NOT NULL DEFAULT 1,
    updated_by   text NOT NULL DEFAULT '',
    updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX source_filters_workspace ON source_filters (workspace_id);

-- Per-contact circuit breaker: the durable trip state (the sliding count lives in Redis).
CREATE TABLE circuit_breakers (
    workspace_id bigint NOT NULL REFERENCES workspaces (id),
    contact_id   uuid NOT NULL,
    status       text NOT NULL CHECK (status IN ('tripped', 'reset')),
    trips        integer NOT NULL DEFAULT 1,
    reason       text NOT NULL DEFAULT '',
    tripped_at   timestamptz NOT NULL DEFAULT now(),
    reset_at     timestamptz,
    reset_by     text,
    PRIMARY KEY (workspace_id, contact_id)
);
CREATE INDEX circuit_breakers_tripped ON circuit_breakers (workspace_id, tripped_at DESC) WHERE status = 'tripped';

-- Silence alarms: configuration and the state of the current episode.
CREATE TABLE silence_alarms (
    id                bigserial PRIMARY KEY,
    workspace_id      bigint NOT NULL REFERENCES workspaces (id),
    source_id         bigint REFERENCES sources (id),
    metric            text NOT NULL CHECK (metric IN ('apply', 'crm_write')),
    threshold_seconds integer NOT NULL DEFAULT 5400 CHECK (threshold_seconds > 0),
    reminder_seconds  integer NOT NULL DEFAULT 3600 CHECK (reminder_seconds > 0),
    business_hours    jsonb NOT NULL DEFAULT '{}',
    min_daily_volume  integer NOT NULL DEFAULT 0 CHECK (min_daily_volume >= 0),
    enabled           boolean NOT NULL DEFAULT true,
    silent            boolean NOT NULL DEFAULT false,
    silent_since      timestamptz,
    last_notified_at  timestamptz,
    reminders         integer NOT NULL DEFAULT 0,
    last_checked_at   timestamptz,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX silence_alarms_scope ON silence_alarms (workspace_id, coalesce(source_id, 0), metric);

-- Health alarms: one threshold per metric per workspace, and whether it is firing.
CREATE TABLE health_alarms (
    workspace_id bigint NOT NULL REFERENCES workspaces (id),
    metric       text NOT NULL,
    threshold    double precision NOT NULL,
    enabled      boolean NOT NULL DEFAULT true,
    firing       boolean NOT NULL DEFAULT false,
    firing_since timestamptz,
    last_value   double precision,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, metric)
);

-- Alert channels; secrets (webhook URLs, bot tokens, routing keys, SMTP passwords) are sealed.
CREATE TABLE alert_channels (
    id              bigserial PRIMARY KEY,
    workspace_id    bigint NOT NULL REFERENCES workspaces (id),
    name            text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    kind            text NOT NULL CHECK (kind IN ('email', 'webhook', 'slack', 'telegram', 'pagerduty')),
    config          jsonb NOT NULL DEFAULT '{}',
    secret_enc      bytea,
    min_severity    text NOT NULL DEFAULT 'info' CHECK (min_severity IN ('info', 'warning', 'critical')),
    enabled         boolean NOT NULL DEFAULT true,
    last_test_at    timestamptz,
    last_test_error text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX alert_channels_workspace ON alert_channels (workspace_id);

-- Per-channel delivery of one alert outbox row: a retry resends only to channels that failed.
CREATE TABLE alert_deliveries (
    outbox_id  bigint NOT NULL REFERENCES outbox (id) ON DELETE CASCADE,
    channel_id bigint NOT NULL REFERENCES alert_channels (id) ON DELETE CASCADE,
    status     text NOT NULL CHECK (status IN ('sent', 'failed')),
    attempts   integer NOT NULL DEFAULT 0,
    last_error text NOT NULL DEFAULT '',
    sent_at    timestamptz,
    PRIMARY KEY (outbox_id, channel_id)
);

-- The scheduler's own heartbeat (one row): the dead-man switch compares ticks.
CREATE TABLE guard_heartbeat (
    id              integer PRIMARY KEY CHECK (id = 1),
    last_tick_at    timestamptz NOT NULL,
    last_ping_error text NOT NULL DEFAULT ''
);

-- Silence alarms ask "when was the last successful apply" every minute.
CREATE INDEX events_last_apply ON events (workspace_id, processed_at DESC) WHERE status IN ('applied', 'unchanged');
CREATE INDEX events_last_apply_source ON events (source_id, processed_at DESC) WHERE status IN ('applied', 'unchanged');

-- +goose Down
DROP INDEX events_last_apply_source;
DROP INDEX events_last_apply;
DROP TABLE guard_heartbeat;
DROP TABLE alert_deliveries;
DROP TABLE alert_channels;
DROP TABLE health_alarms;
DROP TABLE silence_alarms;
DROP TABLE circuit_breakers;
DROP TABLE source_filters;
DROP TABLE guard_settings;
