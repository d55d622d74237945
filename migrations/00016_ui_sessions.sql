-- +goose Up
-- A web app sign-in, held on the server so that signing out ends it for every copy of the cookie. The
-- cookie carries a random token; only its SHA-256 is stored, so a read of this table signs nobody in.
CREATE TABLE ui_sessions (
    token_hash   text PRIMARY KEY,
    user_id      bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    ended_at     timestamptz,
    ended_reason text
);
CREATE INDEX ui_sessions_user_live ON ui_sessions (user_id) WHERE ended_at IS NULL;

-- The workspace a user opened last, so a sign-in from any browser lands there.
ALTER TABLE users ADD COLUMN last_workspace text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE users DROP COLUMN last_workspace;
DROP TABLE ui_sessions;
