package dev.waterline.watermark.postgres;

import dev.waterline.watermark.MarkerStore;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Repository;

/**
 * The marker in PostgreSQL: the one row of {@code reclaim_marker} (V2, V5). Each statement runs in
 * the caller's transaction when there is one (the reclaim leader's fenced transactions), on its
 * own otherwise (a read).
 */
@Repository
class PostgresMarkerStore implements MarkerStore {

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

    PostgresMarkerStore(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @Override
    public Marker read() {
        return jdbc.queryForObject(READ, (rs, i) -> new Marker(rs.getLong(1), rs.getLong(2)));
    }

    @Override
    public void token(long token) {
        jdbc.update(SET_TOKEN, token);
    }

    @Override
    public void write(Marker marker) {
        jdbc.update(SET_BOTH, marker.token(), marker.generation());
    }
}
