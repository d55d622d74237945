-- +goose Up
-- A user with rows here is restricted to those workspaces, with the role given
-- per workspace (an agency's client logins); a user without rows keeps their
-- global role on every workspace. Global admins are never restricted.
CREATE TABLE workspace_members (
    user_id      bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    workspace_id bigint NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    role         text NOT NULL CHECK (role IN ('admin', 'editor', 'viewer')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, workspace_id)
);
CREATE INDEX workspace_members_workspace ON workspace_members (workspace_id);

-- +goose Down
DROP TABLE workspace_members;
