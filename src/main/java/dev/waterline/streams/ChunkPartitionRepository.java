package dev.waterline.streams;

import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Repository;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The statements of {@link ChunkPartitions}: the partitions of {@code stream_chunks} (V6) listed,
 * created and dropped, each create or drop a transaction of its own under one advisory lock (nodes
 * doing the same at once wait for each other instead of failing), and the closed streams past
 * retention deleted, a chunk a statement. A partition's name and range are the caller's; the
 * names it passes are its own ({@link ChunkPartitions#name}), never a client's.
 */
@Repository
class ChunkPartitionRepository {

    private static final String NOW = "SELECT now()";

    private static final String LOCK = """
            SELECT pg_advisory_xact_lock(hashtext('waterline.stream_chunks.partitions'))
            """;

    private static final String LOCK_TIMEOUT = "SET LOCAL lock_timeout = '5s'";

    private static final String PARTITIONS = """
            SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = 'stream_chunks'::regclass
            """;

    /** In order: the partition's name, then its range, from (inclusive) and to (exclusive), as instants. */
    private static final String CREATE_PARTITION = "CREATE TABLE %s PARTITION OF stream_chunks FOR VALUES FROM ('%s') TO ('%s')";

    /** %s: the partition's name. */
    private static final String DROP_PARTITION = "DROP TABLE IF EXISTS %s";

    /** 1: cut-off, 2: chunk. Closed streams created before the cut-off (blobs cascade). */
    private static final String DELETE_OLD_STREAMS = """
            DELETE FROM streams
            WHERE ctid = ANY (ARRAY(SELECT ctid FROM streams WHERE created_at < ? AND state <> 'open' ORDER BY created_at LIMIT ?))
            """;

    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;

    ChunkPartitionRepository(JdbcTemplate jdbc, PlatformTransactionManager transactions) {
        this.jdbc = jdbc;
        this.tx = new TransactionTemplate(transactions);
    }

    /** Whether {@code e} is an insert that found no partition for its time. */
    static boolean missingPartition(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLException s && "23514".equals(s.getSQLState()) && s.getMessage() != null
                    && s.getMessage().contains("no partition of relation")) {
                return true;
            }
        }
        return false;
    }

    /** The database's clock. */
    Instant now() {
        return jdbc.queryForObject(NOW, Timestamp.class).toInstant();
    }

    /** The names of the partitions there are. */
    List<String> partitions() {
        return jdbc.queryForList(PARTITIONS, String.class);
    }

    /**
     * Creates partition {@code name} for [from, to) unless it exists, in a transaction of its own
     * under the advisory lock; answers whether this call made it.
     */
    boolean create(String name, Instant from, Instant to) {
        Boolean made = tx.execute(status -> {
            jdbc.queryForObject(LOCK, Object.class);
            jdbc.execute(LOCK_TIMEOUT);
            if (jdbc.queryForList(PARTITIONS, String.class).contains(name)) {
                return false;
            }
            jdbc.execute(CREATE_PARTITION.formatted(name, from, to));
            return true;
        });
        return Boolean.TRUE.equals(made);
    }

    /** Drops partition {@code name} if it is there, in a transaction of its own under the advisory lock. */
    void drop(String name) {
        tx.executeWithoutResult(status -> {
            jdbc.queryForObject(LOCK, Object.class);
            jdbc.execute(LOCK_TIMEOUT);
            jdbc.execute(DROP_PARTITION.formatted(name));
        });
    }

    /** Deletes up to {@code most} closed streams created before {@code cutoff}; answers how many went. */
    int deleteOldStreams(Instant cutoff, int most) {
        return jdbc.update(DELETE_OLD_STREAMS, Timestamp.from(cutoff), most);
    }
}
