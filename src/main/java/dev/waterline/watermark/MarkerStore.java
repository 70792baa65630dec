package dev.waterline.watermark;

/**
 * The outbox's half of what ties the Redis index to the outbox it indexes: the marker token
 * (moved on every reclaim pass) and the index's generation (moved when every node must rebuild
 * its part of the index), kept in the outbox's own store. Redis holds a copy of both; a Redis that
 * lost or rolled back data holds neither, or older ones. Only the reclaim leader writes them,
 * inside its fenced transactions ({@code reclaim}); every node reads them. A port: PostgreSQL's
 * {@code reclaim_marker} row is the adapter ({@code watermark.postgres}).
 */
public interface MarkerStore {

    /** The marker row as the store holds it. */
    record Marker(long token, long generation) {
    }

    Marker read();

    /** Moves the token on (the leader, in a fenced transaction). */
    void token(long token);

    /** Moves token and generation on (the leader, in a fenced transaction). */
    void write(Marker marker);
}
