-- +goose Up
-- Each row apply writes paid a foreign-key trigger query per key: four observations and a stage change
-- per new lead checked their contact, and every event, contact and queued sync item checked its
-- workspace. Contacts are never deleted (a merge points the loser at the winner, an erasure blanks the
-- row in place) and workspaces are never deleted (they are archived), and every writer of these rows
-- takes the contact or the workspace from a row it wrote or locked in the same transaction, so these
-- keys guard nothing that can happen. The keys to sources and destinations stay: those rows can go.
ALTER TABLE observations DROP CONSTRAINT observations_contact_id_fkey;
ALTER TABLE stage_history DROP CONSTRAINT stage_history_contact_id_fkey;
ALTER TABLE events DROP CONSTRAINT events_workspace_id_fkey;
ALTER TABLE contacts DROP CONSTRAINT contacts_workspace_id_fkey;
ALTER TABLE sync_queue DROP CONSTRAINT sync_queue_workspace_id_fkey;

-- +goose Down
ALTER TABLE sync_queue ADD CONSTRAINT sync_queue_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES workspaces (id);
ALTER TABLE contacts ADD CONSTRAINT contacts_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES workspaces (id);
ALTER TABLE events ADD CONSTRAINT events_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES workspaces (id);
ALTER TABLE stage_history ADD CONSTRAINT stage_history_contact_id_fkey FOREIGN KEY (contact_id) REFERENCES contacts (id);
ALTER TABLE observations ADD CONSTRAINT observations_contact_id_fkey FOREIGN KEY (contact_id) REFERENCES contacts (id);
