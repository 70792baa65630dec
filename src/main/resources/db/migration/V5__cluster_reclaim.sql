-- Reclaim across nodes (docs/ARCHITECTURE.md, "Cluster"). The marker row gains the index's
-- generation and the reclaim leader's lease.
--
-- generation: changes only when the Redis index must be rebuilt by every node (Redis lost or
-- rolled back data, a node lost track of what it recorded, a node died): each node trusts the
-- index only under the generation it rebuilt its own part for. The token still moves every pass.
--
-- leader, leader_epoch, lease_until: one node at a time runs reclaim. A node takes the lease when
-- it has run out (lease_until in the past, by this server's clock, so nodes' clocks do not
-- matter) and renews it every pass; each take raises leader_epoch. Every write the leader makes
-- (the marker, the deletes) runs in a transaction that first locks this row and checks that the
-- leader and epoch are still its own and the lease still runs: a node that stalled past its lease
-- and wakes up finds a newer epoch and writes nothing (fencing), and a take-over waits for a
-- delete in flight to end.
ALTER TABLE reclaim_marker
    ADD COLUMN generation   BIGINT      NOT NULL DEFAULT 0,
    ADD COLUMN leader       TEXT,
    ADD COLUMN leader_epoch BIGINT      NOT NULL DEFAULT 0,
    ADD COLUMN lease_until  TIMESTAMPTZ NOT NULL DEFAULT '-infinity';
