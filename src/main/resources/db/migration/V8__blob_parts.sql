-- File contents in parts (blobs.postgres.PostgresBlobStore): a 32 MiB blob was one BYTEA value,
-- which the server had to hold whole in its heap to write or read (a probe ran a 512 MB heap out
-- with fourteen uploads). A part is 256 KiB; a transfer holds one at a time. The key serves every
-- access: a read selects (blob_id, part) one part at a time, in order, and a removal deletes by
-- blob_id, a range of the same key.
CREATE TABLE blob_parts (
    blob_id  TEXT  NOT NULL,
    part     INT   NOT NULL CHECK (part >= 0),
    data     BYTEA NOT NULL,
    PRIMARY KEY (blob_id, part)
);
-- Stored out of line and not compressed: user files are mostly compressed already (images,
-- archives), and PostgreSQL's compression of each 256 KiB part would cost CPU for nothing.
ALTER TABLE blob_parts ALTER COLUMN data SET STORAGE EXTERNAL;

-- Files whose owner row was deleted, waiting for their contents to leave the store
-- (blobs.BlobRemovals). A trigger on each owner table queues the removal in the transaction that
-- deletes the row, so no deletion forgets its file and a crash before the removal loses nothing.
-- The key makes queuing twice a no-op; removals are read oldest first.
CREATE TABLE blob_removals (
    blob_id    TEXT        PRIMARY KEY,
    queued_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX blob_removals_queued ON blob_removals (queued_at);

CREATE FUNCTION queue_blob_removal() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO blob_removals (blob_id) VALUES (OLD.blob_id) ON CONFLICT (blob_id) DO NOTHING;
    RETURN NULL;
END
$$;

-- A stream's blob is described here and stored as parts: the row is inserted (uploading) before
-- the first byte of the body is read, once the uploader's right to it has been checked, and marked
-- stored with its size and digest when the last part is in. Only stored blobs are read or named by
-- a chunk; an upload that never finishes is deleted by the streams' sweep (and its parts removed).
ALTER TABLE stream_blobs ADD COLUMN state TEXT NOT NULL DEFAULT 'stored' CHECK (state IN ('uploading', 'stored'));
ALTER TABLE stream_blobs ALTER COLUMN sha256 DROP NOT NULL;

INSERT INTO blob_parts (blob_id, part, data)
SELECT b.blob_id, g.part, substring(b.data FROM g.part * 262144 + 1 FOR 262144)
FROM stream_blobs b
CROSS JOIN LATERAL generate_series(0, greatest(0, (octet_length(b.data) - 1) / 262144)) AS g(part)
WHERE octet_length(b.data) > 0;

ALTER TABLE stream_blobs DROP COLUMN data;

-- The sweep of abandoned uploads reads only the rows still uploading, oldest first.
CREATE INDEX stream_blobs_uploading ON stream_blobs (created_at) WHERE state = 'uploading';

CREATE TRIGGER stream_blobs_removal AFTER DELETE ON stream_blobs
    FOR EACH ROW EXECUTE FUNCTION queue_blob_removal();
