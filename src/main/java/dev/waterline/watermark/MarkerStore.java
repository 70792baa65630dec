package dev.waterline.watermark;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Repository;

/**
 * The PostgreSQL half of what ties the Redis index to the outbox it indexes: the marker token
 * (moved on every reclaim pass) and the index's generation (moved when every node must rebuild
 * its part of the index). Redis holds a copy of both; a Redis that lost or rolled back data holds
 * neither, or older ones. Only the reclaim leader writes them, inside its fenced transactions
 * ({@code reclaim}); every node reads them.
 */
@Repository
public class MarkerStore {

    /** The marker row as PostgreSQL holds it. */
    public record Marker(long token, long generation) {
    }

    private static final String READ = """
            SELECT token, generation FROM reclaim_marker
            """;

    /** 1: the new token. */
    private static final String SET_TOKEN = """
            UPDATE reclaim_marker SET token = ?, updated_at = now()
            """;

    /** 1: the new token, 2: the new generation. */
    private static final String SET_BOTH = """
            UPDATE reclaim_marker SET token = ?, generation = ?, updated_at = now()
            """;

    private final JdbcTemplate jdbc;

    MarkerStore(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    public Marker read() {
        return jdbc.queryForObject(READ, (rs, i) -> new Marker(rs.getLong(1), rs.getLong(2)));
    }

    /** Moves the token on (the leader, in a fenced transaction). */
    public void token(long token) {
        jdbc.update(SET_TOKEN, token);
    }

    /** Moves token and generation on (the leader, in a fenced transaction). */
    public void write(Marker marker) {
        jdbc.update(SET_BOTH, marker.token(), marker.generation());
    }
}
