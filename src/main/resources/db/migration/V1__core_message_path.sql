-- Core message path: chats, membership, durable history, the per-recipient outbox,
-- send idempotency and read receipts. See docs/ARCHITECTURE.md for the invariants.

CREATE TABLE chats (
    chat_id     TEXT        PRIMARY KEY,             -- ULID minted by the server
    title       TEXT,
    -- Last reserved per-chat seq. Ingest bumps it under this row's lock in the same
    -- transaction that inserts the history rows, so per-chat commit order = seq order (I7).
    last_seq    BIGINT      NOT NULL DEFAULT 0 CHECK (last_seq >= 0),
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE chat_members (
    chat_id    TEXT        NOT NULL REFERENCES chats (chat_id) ON DELETE CASCADE,
    user_id    TEXT        NOT NULL,
    joined_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- One membership per (chat, user); also serves "members of this chat" (ingest's
    -- recipient lookup and every membership check) as a prefix scan.
    PRIMARY KEY (chat_id, user_id)
);
-- "Which chats is this user in" (GET /api/chats) would otherwise scan every membership.
CREATE INDEX chat_members_by_user ON chat_members (user_id, chat_id);

CREATE TABLE message_history (
    chat_id         TEXT        NOT NULL REFERENCES chats (chat_id) ON DELETE CASCADE,
    seq             BIGINT      NOT NULL CHECK (seq > 0),
    message_id      TEXT        NOT NULL,          -- ULID: identity and dedupe key, never order (I5)
    sender_id       TEXT        NOT NULL,
    correlation_id  TEXT        NOT NULL,
    body            TEXT        NOT NULL,
    sent_at         TIMESTAMPTZ NOT NULL,
    -- Recovery pages by (chat_id, seq): the key makes "seq > ? ORDER BY seq" one range scan
    -- and guarantees a seq can never be issued twice in a chat.
    PRIMARY KEY (chat_id, seq)
);
-- History sync resolves the client's `since` messageId to its seq.
CREATE UNIQUE INDEX message_history_message_id ON message_history (message_id);
-- Retention deletes the oldest history by time without scanning every chat.
CREATE INDEX message_history_sent_at ON message_history (sent_at);

-- The delivery buffer: one row per recipient of an accepted message, written in the
-- message's own transaction after its history row (I1). It carries a full copy of the
-- message so that every read of it is a linear scan by id, as a log would serve it.
CREATE TABLE outbox (
    id              BIGSERIAL   PRIMARY KEY,       -- the deliveryId: a position in the buffer
    recipient_id    TEXT        NOT NULL,
    chat_id         TEXT        NOT NULL,
    seq             BIGINT      NOT NULL,
    message_id      TEXT        NOT NULL,
    sender_id       TEXT        NOT NULL,
    correlation_id  TEXT        NOT NULL,
    body            TEXT        NOT NULL,
    sent_at         TIMESTAMPTZ NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- The poller may claim the row once due_at has passed. A new row is due one lease after
    -- insert (the fast path delivers it meanwhile); each claim pushes it one lease further;
    -- 'infinity' means delivery work is finished and only reclaim remains.
    due_at          TIMESTAMPTZ NOT NULL,
    attempts        INTEGER     NOT NULL DEFAULT 0  -- poller (re)deliveries of this row
);
-- No other index on purpose: the poller and GC read the outbox only in id order.

-- Idempotent sends: (sender, correlationId) -> the message it created, for the
-- idempotency window. Kept apart from history so an expired key can be reused.
CREATE TABLE send_idempotency (
    sender_id       TEXT        NOT NULL,
    correlation_id  TEXT        NOT NULL,
    chat_id         TEXT        NOT NULL,
    seq             BIGINT      NOT NULL,
    message_id      TEXT        NOT NULL,
    sent_at         TIMESTAMPTZ NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- The guard: two concurrent batches carrying the same key cannot both commit.
    PRIMARY KEY (sender_id, correlation_id)
);
-- The purge of expired keys deletes by age.
CREATE INDEX send_idempotency_created_at ON send_idempotency (created_at);

CREATE TABLE read_receipts (
    chat_id     TEXT        NOT NULL REFERENCES chats (chat_id) ON DELETE CASCADE,
    user_id     TEXT        NOT NULL,
    seq         BIGINT      NOT NULL CHECK (seq >= 0),
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- One receipt per member; GET /api/chats/{id} reads a chat's receipts as a prefix scan.
    PRIMARY KEY (chat_id, user_id)
);
