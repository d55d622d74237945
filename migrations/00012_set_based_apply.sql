-- +goose Up
-- Set-based apply and the ingest hot path write thousands of rows a second into these tables. Each
-- foreign key to workspaces costs one lookup per inserted row (a trigger query): on every idempotency
-- key, observation, stage change and outbox row. Workspaces are never deleted (they are archived), and
-- every writer of these rows takes the workspace from a row that already references it (the event, the
-- contact), so these keys guard nothing that can happen. The keys to contacts stay (they tie each row
-- to the person it describes), and so do the events' keys (the inbox's integrity at its door).
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_workspace_id_fkey;
ALTER TABLE observations DROP CONSTRAINT observations_workspace_id_fkey;
ALTER TABLE stage_history DROP CONSTRAINT stage_history_workspace_id_fkey;
ALTER TABLE outbox DROP CONSTRAINT outbox_workspace_id_fkey;

-- One index serves both "an event's observation of a field is stored once" and reading a contact's
-- observations: a unique index treats NULL event ids as distinct, exactly as the partial one did, and
-- ON CONFLICT (contact_id, field, event_id) WHERE event_id IS NOT NULL still infers it.
CREATE UNIQUE INDEX observations_contact_field_event ON observations (contact_id, field, event_id);
DROP INDEX observations_once_per_event;
DROP INDEX observations_contact;

-- An apply batch looks its keys up one at a time: the unresolved events of an email or a phone, the live
-- contact owning one. On tables that grow faster than their statistics (an inbox filling with a backlog)
-- the planner costs every index as tiny and picked any index led by workspace_id for such a lookup, then
-- scanned the whole workspace's backlog with a filter, once per key: apply got slower as the backlog
-- grew. Led by the email or the phone, the index a lookup needs is the only one that narrows it (the
-- lookups compare the workspace outside the index).
CREATE INDEX events_unresolved_by_email ON events (email, workspace_id) WHERE status IN ('pending', 'waiting', 'retrying') AND email IS NOT NULL;
CREATE INDEX events_unresolved_by_phone ON events (phone, workspace_id) WHERE status IN ('pending', 'waiting', 'retrying') AND phone IS NOT NULL;
DROP INDEX events_unresolved_email;
DROP INDEX events_unresolved_phone;
CREATE UNIQUE INDEX contacts_email_owner ON contacts (email, workspace_id) WHERE email IS NOT NULL AND merged_into IS NULL;
CREATE UNIQUE INDEX contacts_phone_owner ON contacts (phone, workspace_id) WHERE phone IS NOT NULL AND merged_into IS NULL AND NOT phone_shared;
DROP INDEX contacts_email;
DROP INDEX contacts_phone;

-- +goose Down
CREATE UNIQUE INDEX contacts_phone ON contacts (workspace_id, phone) WHERE phone IS NOT NULL AND merged_into IS NULL AND NOT phone_shared;
CREATE UNIQUE INDEX contacts_email ON contacts (workspace_id, email) WHERE email IS NOT NULL AND merged_into IS NULL;
DROP INDEX contacts_phone_owner;
DROP INDEX contacts_email_owner;
CREATE INDEX events_unresolved_phone ON events (workspace_id, phone) WHERE status IN ('pending', 'waiting', 'retrying');
CREATE INDEX events_unresolved_email ON events (workspace_id, email) WHERE status IN ('pending', 'waiting', 'retrying');
DROP INDEX events_unresolved_by_phone;
DROP INDEX events_unresolved_by_email;
CREATE INDEX observations_contact ON observations (contact_id, field);
CREATE UNIQUE INDEX observations_once_per_event ON observations (contact_id, field, event_id) WHERE event_id IS NOT NULL;
DROP INDEX observations_contact_field_event;
ALTER TABLE outbox ADD CONSTRAINT outbox_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES workspaces (id);
ALTER TABLE stage_history ADD CONSTRAINT stage_history_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES workspaces (id);
ALTER TABLE observations ADD CONSTRAINT observations_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES workspaces (id);
ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES workspaces (id);
