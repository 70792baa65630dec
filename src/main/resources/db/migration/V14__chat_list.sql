-- The chat list in one call (PROTOCOL.md §10, docs/ARCHITECTURE.md "The chat list"): each chat's
-- unread count and last message, read with a few index probes per chat and never by reading a
-- chat's history. Counts are running totals kept by the group commit under the chat row's lock it
-- already holds, so an unread count is a difference of two of them.

-- The chat's count of text and stream entries ever committed (the kinds a reader counts as
-- unread), raised by RESERVE_SEQS in the commit that adds them; retention never lowers it (a
-- count is only ever compared with a history row's own, below). last_message_seq is the seq of the
-- chat's last text or stream entry, so that its current state (an edit rewrites the row's body, a
-- delete empties it) is one primary-key probe; null while the chat has none.
ALTER TABLE chats
    ADD COLUMN countable        BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN last_message_seq BIGINT;

-- The chat's count of text and stream entries up to and including this row, written once by the
-- commit that inserts the row. chats.countable minus this, at a reader's read position, is how
-- many such entries follow it. Added with a default (no rewrite), filled below, then the default
-- dropped: every insert must give it, so a writer that forgets fails loudly instead of counting wrong.
ALTER TABLE message_history ADD COLUMN countable BIGINT NOT NULL DEFAULT 0;

UPDATE message_history h SET countable = r.countable
FROM (SELECT chat_id, seq,
             count(*) FILTER (WHERE kind IN ('text', 'stream')) OVER (PARTITION BY chat_id ORDER BY seq) AS countable
      FROM message_history) r
WHERE h.chat_id = r.chat_id AND h.seq = r.seq AND r.countable <> 0;

ALTER TABLE message_history ALTER COLUMN countable DROP DEFAULT;

-- Retention may have taken a chat's oldest rows: the counts start from what is kept, so that every
-- difference between the chat's count and a row's counts kept rows only.
UPDATE chats c SET countable = s.countable, last_message_seq = s.last_message_seq
FROM (SELECT chat_id, count(*) AS countable, max(seq) AS last_message_seq
      FROM message_history WHERE kind IN ('text', 'stream') GROUP BY chat_id) s
WHERE c.chat_id = s.chat_id;

-- Sending is reading (PROTOCOL.md §10): the seq of the member's last text or stream entry in the
-- chat, moved by the group commit that makes one (the chat row is locked then, and every writer of
-- a membership row locks its chat first). A chat list counts as unread only what lies past the
-- later of this and the member's read receipt, so a member's own entries are never unread. Kept
-- apart from read_receipts so that a receipt stays what the member sent, and read frames what they
-- were. Filled from history for the entries made before.
ALTER TABLE chat_members ADD COLUMN own_seq BIGINT NOT NULL DEFAULT 0;

UPDATE chat_members m SET own_seq = s.seq
FROM (SELECT chat_id, sender_id, max(seq) AS seq FROM message_history
      WHERE kind IN ('text', 'stream') GROUP BY chat_id, sender_id) s
WHERE m.chat_id = s.chat_id AND m.user_id = s.sender_id;

-- Every send now updates its sender's membership row: room left in each page lets the update stay
-- on the page (a heap-only tuple, no new index entries). Applies to the pages written from now on.
ALTER TABLE chat_members SET (fillfactor = 80);

-- Deleted messages above a reader's read position are subtracted from the unread count: deletes
-- are rare, so this partial index holds few rows and the count reads only them, never the chat's
-- history. Keyed by chat first, like every message-path key.
CREATE INDEX message_history_deleted ON message_history (chat_id, seq) WHERE deleted_seq IS NOT NULL;
