package dev.waterline.blobs;

import java.util.List;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Repository;

/**
 * The removal ledger, {@code blob_removals} (V8): the keys whose content is to be removed, queued
 * by the owner tables' triggers or by hand, read and emptied by {@link BlobRemovals}. Each
 * statement is a transaction of its own.
 */
@Repository
class BlobRemovalRepository {

    /** 1: most. The oldest queued removals. */
    private static final String QUEUED = """
            SELECT blob_id FROM blob_removals ORDER BY queued_at LIMIT ?
            """;

    /** 1: key. A removal queued by hand (an upload that failed), whether or not a trigger queued it already. */
    private static final String QUEUE = """
            INSERT INTO blob_removals (blob_id) VALUES (?) ON CONFLICT (blob_id) DO NOTHING
            """;

    private static final String DONE = """
            DELETE FROM blob_removals WHERE blob_id = ?
            """;

    private final JdbcTemplate jdbc;

    BlobRemovalRepository(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    /** The keys of the oldest {@code most} removals queued. */
    List<String> queued(int most) {
        return jdbc.queryForList(QUEUED, String.class, most);
    }

    /** Queues the removal of {@code key}'s content. */
    void queue(String key) {
        jdbc.update(QUEUE, key);
    }

    /** {@code key}'s content is removed: its ledger row goes. */
    void done(String key) {
        jdbc.update(DONE, key);
    }
}
