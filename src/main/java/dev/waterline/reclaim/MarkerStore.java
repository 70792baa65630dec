package dev.waterline.reclaim;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Repository;

/** The PostgreSQL half of the marker that ties the Redis index to the outbox it indexes. */
@Repository
class MarkerStore {

    private static final String TOKEN = """
            SELECT token FROM reclaim_marker
            """;

    /** 1: the new token. */
    private static final String SET_TOKEN = """
            UPDATE reclaim_marker SET token = ?, updated_at = now()
            """;

    private final JdbcTemplate jdbc;

    MarkerStore(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    long token() {
        Long t = jdbc.queryForObject(TOKEN, Long.class);
        return t == null ? 0 : t;
    }

    void token(long token) {
        jdbc.update(SET_TOKEN, token);
    }
}
