-- A user's own settings (PROTOCOL.md §10): today whether their presence is hidden. One row per user
-- who ever changed a setting; a user without a row has the defaults (presence visible). Written by
-- PUT /api/me/settings, read by presence (GET /api/users/{userId}/presence and the announcements).
CREATE TABLE user_settings (
    user_id         TEXT        PRIMARY KEY,
    presence_hidden BOOLEAN     NOT NULL DEFAULT false,
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);
