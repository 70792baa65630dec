package dev.waterline.reclaim;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

import dev.waterline.presence.ClusterProperties;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The cluster: the reclaim lease is a row in PostgreSQL (V5: {@code leader}, {@code leader_epoch},
 * {@code lease_until} on the marker row), taken when it has run out and renewed every pass, by
 * PostgreSQL's clock. Each take raises the epoch. Every write the leader makes runs in a
 * transaction that first locks the row and checks that leader and epoch are still this node's and
 * the lease still runs, so a node that stalled past its lease (a pause, a partition) and wakes up
 * writes nothing: its epoch is gone. A take-over waits on that row lock for a delete in flight.
 * The lease lasts one {@code waterline.cluster.node-timeout}: a leader that dies is replaced
 * within it.
 */
@Component
@ConditionalOnProperty(name = "waterline.cluster.enabled", havingValue = "true")
class PostgresLease implements Leadership {

    /**
     * Renews this node's lease, or takes one that has run out (raising the epoch); no row when
     * another node holds a running lease. 1: this node, 2: lease in ms, 3: this node again.
     */
    private static final String TAKE_OR_RENEW = """
            UPDATE reclaim_marker
            SET leader_epoch = CASE WHEN leader = ? AND lease_until > now() THEN leader_epoch ELSE leader_epoch + 1 END,
                lease_until = now() + (? * interval '1 millisecond'),
                leader = ?
            WHERE leader IS NULL OR leader = ? OR lease_until <= now()
            RETURNING leader_epoch
            """;

    /** Locks the row for the fenced transaction, if the lease is still this one. 1: node, 2: epoch. */
    private static final String FENCE = """
            SELECT 1 FROM reclaim_marker WHERE leader = ? AND leader_epoch = ? AND lease_until > now() FOR UPDATE
            """;

    /** 1: node, 2: epoch. */
    private static final String RESIGN = """
            UPDATE reclaim_marker SET lease_until = '-infinity' WHERE leader = ? AND leader_epoch = ?
            """;

    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;
    private final String node;
    private final Duration lease;
    private volatile long epoch = -1;

    PostgresLease(JdbcTemplate jdbc, TransactionTemplate tx, ClusterProperties cluster) {
        this.jdbc = jdbc;
        this.tx = tx;
        this.node = cluster.nodeId();
        this.lease = cluster.nodeTimeout();
    }

    @Override
    public long lead() {
        List<Long> e = jdbc.queryForList(TAKE_OR_RENEW, Long.class, node, lease.toMillis(), node, node);
        epoch = e.isEmpty() ? -1 : e.getFirst();
        return epoch;
    }

    @Override
    public <T> Optional<T> fenced(long epoch, Supplier<T> work) {
        return tx.execute(status -> {
            if (jdbc.queryForList(FENCE, Integer.class, node, epoch).isEmpty()) {
                return Optional.<T>empty();
            }
            return Optional.ofNullable(work.get());
        });
    }

    @Override
    public void resign() {
        long e = epoch;
        if (e >= 0) {
            jdbc.update(RESIGN, node, e);
        }
    }
}
