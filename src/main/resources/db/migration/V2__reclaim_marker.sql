-- The proof that the Redis watermark index belongs to the outbox it indexes. Every GC pass
-- checks that Redis holds the token stored here, then moves both to a new value. A Redis that
-- lost data (flush, restart, a failover to a stale replica restoring an older state) holds no
-- token or an older one, so the next pass rebuilds the index from the outbox before it deletes
-- anything.
CREATE TABLE reclaim_marker (
    -- a single row: the primary key and the check keep it single
    singleton  BOOLEAN     PRIMARY KEY DEFAULT true CHECK (singleton),
    token      BIGINT      NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
INSERT INTO reclaim_marker (token) VALUES (0);
