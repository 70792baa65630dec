package dev.waterline.reclaim;

import java.util.Optional;
import java.util.function.Supplier;

/**
 * Which node runs reclaim: the one that holds the lease. A port: in the single-node mode this
 * node always leads ({@link LocalLeadership}); in the cluster a lease in PostgreSQL's marker row
 * ({@link PostgresLease}), whose epoch fences every write the leader makes.
 */
interface Leadership {

    /** Takes or renews the lease; the lease's epoch when this node leads, -1 when another node does. */
    long lead();

    /**
     * Runs {@code work} in one transaction that commits only while this node still holds the lease
     * under {@code epoch}; empty (nothing written) when it does not.
     */
    <T> Optional<T> fenced(long epoch, Supplier<T> work);

    /** Gives the lease up (a graceful stop), so that another node need not wait for it to run out. */
    void resign();
}
