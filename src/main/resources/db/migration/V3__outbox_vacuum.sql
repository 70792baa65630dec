-- The outbox churns: every row is inserted, often updated (a claim or a retirement moves
-- due_at) and deleted within seconds. With the default thresholds (20 % of the table) its dead
-- rows pile up between autovacuum runs, and every linear read (the poller's claim, GC's prefix
-- delete, the depth gauge) wades through them: under load a count of 38 k live rows read 6,000
-- pages. Vacuum it after every 5,000 dead rows, without the cost-based pauses.
-- fillfactor 90 leaves room on each page for the due_at updates to stay HOT (due_at has no
-- index), so they add no index entries.
ALTER TABLE outbox SET (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 5000,
    autovacuum_vacuum_insert_scale_factor = 0,
    autovacuum_vacuum_insert_threshold = 20000,
    autovacuum_vacuum_cost_delay = 0,
    autovacuum_analyze_scale_factor = 0.05,
    fillfactor = 90
);
