-- +goose Up
-- The source edge: no identity-less event is ever applied, refused deliveries
-- are counted per source, per-source alarms are listed by one query, and a
-- silence alarm can learn its source's weekly rhythm.

-- An id-only event (it carries a provider id to hydrate from) reaches applied
-- or unchanged only once it has an email or a phone. Whatever code path
-- records the outcome, the database refuses the write otherwise. Erasure
-- clears hydration together with the identity, so erased rows stay valid.
-- NOT VALID: rows written before this rule are not re-checked.
ALTER TABLE events ADD CONSTRAINT events_applied_with_identity
    CHECK (status NOT IN ('applied', 'unchanged') OR email IS NOT NULL OR phone IS NOT NULL OR hydration IS NULL) NOT VALID;

-- Deliveries to a known source that were refused (401, 400, 413, 415), by
-- reason, and the outcomes of its latest deliveries for the refusal alarm
-- (recent: one letter per delivery, oldest first: a accepted or duplicate,
-- s signature, m malformed, l too large, u unsupported content type).
CREATE TABLE source_deliveries (
    source_id           bigint PRIMARY KEY REFERENCES sources (id),
    workspace_id        bigint NOT NULL REFERENCES workspaces (id),
    refused_signature   bigint NOT NULL DEFAULT 0,
    refused_malformed   bigint NOT NULL DEFAULT 0,
    refused_too_large   bigint NOT NULL DEFAULT 0,
    refused_unsupported bigint NOT NULL DEFAULT 0,
    recent              text NOT NULL DEFAULT '',
    last_refused_at     timestamptz,
    last_refused_reason text NOT NULL DEFAULT '',
    updated_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX source_deliveries_workspace ON source_deliveries (workspace_id);

-- Alarms about one source that are not silence alarms (those keep their state
-- in silence_alarms): today the signature-refusal alarm.
CREATE TABLE source_alarms (
    source_id    bigint NOT NULL REFERENCES sources (id),
    workspace_id bigint NOT NULL REFERENCES workspaces (id),
    kind         text NOT NULL CHECK (kind IN ('signature_refused')),
    firing       boolean NOT NULL DEFAULT false,
    firing_since timestamptz,
    message      text NOT NULL DEFAULT '',
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source_id, kind)
);
CREATE INDEX source_alarms_firing ON source_alarms (workspace_id) WHERE firing;

-- A silence alarm's rule: 'static' (threshold and business hours) or
-- 'learned' (the source's expected arrivals per hour of the week). Existing
-- alarms keep the static rule; new ones default to the learned rule, which
-- falls back to the static one while history is too short. profile caches the
-- learned rates; message is the text of the current episode.
ALTER TABLE silence_alarms ADD COLUMN rule text NOT NULL DEFAULT 'static' CHECK (rule IN ('static', 'learned'));
ALTER TABLE silence_alarms ALTER COLUMN rule SET DEFAULT 'learned';
ALTER TABLE silence_alarms ADD COLUMN profile jsonb;
ALTER TABLE silence_alarms ADD COLUMN profile_at timestamptz;
ALTER TABLE silence_alarms ADD COLUMN message text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE silence_alarms DROP COLUMN message;
ALTER TABLE silence_alarms DROP COLUMN profile_at;
ALTER TABLE silence_alarms DROP COLUMN profile;
ALTER TABLE silence_alarms DROP COLUMN rule;
DROP TABLE source_alarms;
DROP TABLE source_deliveries;
ALTER TABLE events DROP CONSTRAINT events_applied_with_identity;
