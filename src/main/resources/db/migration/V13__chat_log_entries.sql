-- A chat is one log (PROTOCOL.md §9, docs/ARCHITECTURE.md "A chat is one log"): an edit, a delete
-- and a reaction are entries of the chat's history with their own seq, written by the group commit
-- like a message. The columns below are null on the kinds that do not use them. Adding nullable
-- columns rewrites nothing.
-- The new check is added NOT VALID (no scan under the table's exclusive lock) and validated after,
-- under a lock that lets writes go on.
ALTER TABLE message_history DROP CONSTRAINT IF EXISTS message_history_kind_check;
ALTER TABLE message_history
    ADD CONSTRAINT message_history_kind_check
        CHECK (kind IN ('text', 'stream', 'edit', 'delete', 'reaction', 'member')) NOT VALID,
    ADD COLUMN reply_to    TEXT,          -- text: the messageId it answers (same chat)
    ADD COLUMN target_id   TEXT,          -- edit, delete, reaction: the messageId it changes
    ADD COLUMN emoji       TEXT,          -- reaction
    ADD COLUMN reaction_on BOOLEAN,       -- reaction: true added, false taken back
    -- the current state of a text entry, kept by the entries that change it, in their commit:
    ADD COLUMN edited_at   TIMESTAMPTZ,   -- the last edit's time
    ADD COLUMN deleted_seq BIGINT;        -- the delete entry's seq (a second delete answers it)

ALTER TABLE message_history VALIDATE CONSTRAINT message_history_kind_check;

-- A delete finds the edits of its target to erase their text, and a history page never needs it:
-- partial, so the text messages (nearly every row) pay nothing for it. Keyed by chat first, like
-- every message-path key.
CREATE INDEX message_history_targets ON message_history (chat_id, target_id) WHERE target_id IS NOT NULL;

-- The kind-specific fields of an outbox row's entry (targetId, emoji, on, replyTo, attachments) as
-- the JSON members the message frame carries, written by the group commit; null for a plain text
-- message, so the hot path stores nothing more.
ALTER TABLE outbox ADD COLUMN extra TEXT;

-- The current reactions: one row per (message, user, emoji) that is on. A history page counts a
-- page's reactions and reads the reader's own from this table, in one query each, by the key's
-- prefix (chat_id, target_seq); the group commit reads a user's reactions on a message by the key
-- too. entry_seq is the reaction entry that put it on. The reactions go with their message when
-- retention or a delete removes it (the foreign key's cascade, served by the key's prefix).
CREATE TABLE message_reactions (
    chat_id     TEXT   NOT NULL,
    target_seq  BIGINT NOT NULL,
    user_id     TEXT   NOT NULL,
    emoji       TEXT   NOT NULL,
    entry_seq   BIGINT NOT NULL,
    PRIMARY KEY (chat_id, target_seq, user_id, emoji),
    FOREIGN KEY (chat_id, target_seq) REFERENCES message_history (chat_id, seq) ON DELETE CASCADE
);

-- Files attached to messages (PROTOCOL.md §9). Uploaded first (uploading, then stored), then named
-- by one send, which sets message_seq in its commit; from then on the file lives as long as its
-- message: the foreign key's cascade deletes the row when retention or a chat's removal deletes the
-- message, and a delete entry deletes it in its own commit. Deleting the row erases its content
-- (below).
CREATE TABLE attachments (
    attachment_id TEXT        PRIMARY KEY,            -- ULID minted by the server; also its blob's key
    chat_id       TEXT        NOT NULL REFERENCES chats (chat_id) ON DELETE CASCADE,
    uploader_id   TEXT        NOT NULL,
    blob_id       TEXT        NOT NULL,
    content_type  TEXT        NOT NULL,
    name          TEXT,
    size          BIGINT,
    sha256        TEXT,
    state         TEXT        NOT NULL DEFAULT 'uploading' CHECK (state IN ('uploading', 'stored')),
    message_seq   BIGINT,                             -- the message that carries it, once sent
    position      SMALLINT,                           -- its place among the message's attachments
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    FOREIGN KEY (chat_id, message_seq) REFERENCES message_history (chat_id, seq) ON DELETE CASCADE
);
-- A history page reads the attachments of its messages, and a delete or the cascade finds a
-- message's attachments, by (chat_id, message_seq); only sent attachments are indexed.
CREATE INDEX attachments_of_message ON attachments (chat_id, message_seq) WHERE message_seq IS NOT NULL;
-- The orphan sweep reads the attachments no send named, oldest first.
CREATE INDEX attachments_unsent ON attachments (created_at) WHERE message_seq IS NULL;

-- Erasing an attachment: the removal ledger (V8) takes its content out of whichever store holds it
-- after commit (and after a crash), and the parts kept in PostgreSQL go in the deleting transaction
-- itself, so that a delete leaves nothing of the file in the database once it commits.
CREATE FUNCTION erase_blob_parts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM blob_parts WHERE blob_id = OLD.blob_id;
    RETURN NULL;
END
$$;
CREATE TRIGGER attachments_removal AFTER DELETE ON attachments
    FOR EACH ROW EXECUTE FUNCTION queue_blob_removal();
CREATE TRIGGER attachments_erase_parts AFTER DELETE ON attachments
    FOR EACH ROW EXECUTE FUNCTION erase_blob_parts();

-- A delete erases the text of its target from pending and dead hook deliveries too (their payload
-- is a copy); this finds them by message without reading every delivery.
CREATE INDEX hook_deliveries_by_message ON hook_deliveries (message_id);
