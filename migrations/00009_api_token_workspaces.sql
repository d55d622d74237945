-- +goose Up
-- A token with rows here is limited to those workspaces (a client's script) and acts in each with its
-- own role; a token without rows reaches every workspace, as before. Workspaces are archived, never
-- deleted: RESTRICT keeps it so for scoped ones, because losing a token's last row here would widen it
-- to every workspace.
CREATE TABLE api_token_workspaces (
    token_id     bigint NOT NULL REFERENCES api_tokens (id) ON DELETE CASCADE,
    workspace_id bigint NOT NULL REFERENCES workspaces (id) ON DELETE RESTRICT,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (token_id, workspace_id)
);
CREATE INDEX api_token_workspaces_workspace ON api_token_workspaces (workspace_id);

-- +goose Down
DROP TABLE api_token_workspaces;
