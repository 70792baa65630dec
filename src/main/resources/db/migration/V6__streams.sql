-- Durable streams (PROTOCOL.md §6, docs/ARCHITECTURE.md "Streams").
--
-- Messages gain a kind: 'text' (a send) or 'stream' (the message that opens a stream, which
-- names it). Adding a column with a constant default rewrites nothing (PostgreSQL 11+).
ALTER TABLE message_history
    ADD COLUMN kind      TEXT NOT NULL DEFAULT 'text' CHECK (kind IN ('text', 'stream')),
    ADD COLUMN stream_id TEXT;
ALTER TABLE outbox
    ADD COLUMN kind      TEXT NOT NULL DEFAULT 'text',
    ADD COLUMN stream_id TEXT;

-- One row per stream, written in the group commit of the message that opens it. last_seq is the
-- producer sequence: an append checks and raises it under this row's lock in the transaction that
-- inserts the chunks, so a stream's chunks commit in seq order and no reader can see seq n + 1
-- before n (S1). created_at is the database's clock, like the chunks' (partition pruning compares
-- the two).
CREATE TABLE streams (
    stream_id       TEXT        PRIMARY KEY,                 -- ULID minted by the server
    chat_id         TEXT        NOT NULL REFERENCES chats (chat_id) ON DELETE CASCADE,
    producer_id     TEXT        NOT NULL,
    title           TEXT,
    message_id      TEXT        NOT NULL,                    -- the opening message
    chat_seq        BIGINT      NOT NULL,                    -- its seq in the chat
    state           TEXT        NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'complete', 'aborted')),
    last_seq        BIGINT      NOT NULL DEFAULT 0 CHECK (last_seq >= 0),
    reason          TEXT,                                    -- why it was aborted
    created_at      TIMESTAMPTZ NOT NULL,
    last_append_at  TIMESTAMPTZ NOT NULL,
    closed_at       TIMESTAMPTZ
);
-- The idle reaper looks only at open streams, oldest append first.
CREATE INDEX streams_open_idle ON streams (last_append_at) WHERE state = 'open';
-- Retention deletes the oldest streams by time.
CREATE INDEX streams_created_at ON streams (created_at);
-- A retried open (same sender and correlationId) finds its stream by the message it made.
CREATE UNIQUE INDEX streams_message_id ON streams (message_id);

-- Large chunks travel as a reference: the bytes are uploaded to the stream first.
CREATE TABLE stream_blobs (
    blob_id       TEXT        PRIMARY KEY,
    stream_id     TEXT        NOT NULL REFERENCES streams (stream_id) ON DELETE CASCADE,
    content_type  TEXT        NOT NULL,
    size          BIGINT      NOT NULL CHECK (size >= 0),
    sha256        TEXT        NOT NULL,
    data          BYTEA       NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX stream_blobs_stream ON stream_blobs (stream_id);

-- The chunks, partitioned by time (streams.ChunkPartitions creates partitions ahead and drops
-- those past history retention: a drop, not a delete, so retention leaves no dead tuples). The
-- key must hold the partition column, so it cannot by itself keep (stream_id, seq) unique across
-- partitions: the stream row's lock and last_seq do (S1). Reads are "stream_id = ? AND seq >= ?
-- ORDER BY seq", one range scan of the key per partition, and give the stream's own created_at
-- as a lower bound on created_at so that only the partitions since it are scanned.
-- blob_id chunks carry a copy of their blob's size and type, so that reading them joins nothing.
CREATE TABLE stream_chunks (
    stream_id     TEXT        NOT NULL,
    seq           BIGINT      NOT NULL CHECK (seq > 0),
    created_at    TIMESTAMPTZ NOT NULL,
    data          TEXT,
    blob_id       TEXT,
    size          BIGINT,
    content_type  TEXT,
    PRIMARY KEY (stream_id, seq, created_at),
    CHECK ((data IS NULL) <> (blob_id IS NULL))
) PARTITION BY RANGE (created_at);
