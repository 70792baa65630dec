package dev.waterline.streams;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Repository;

/**
 * The reads of streams, chunks and blobs, and the blob upload (the append transaction is
 * {@link Appender}'s). Every read of chunks names the stream's creation time as a lower bound on
 * {@code created_at} and the database's clock as an upper one (a chunk's time is its append
 * transaction's), so that PostgreSQL scans only the partitions in between (V6), not the ones
 * created ahead: a tail's read of one new chunk is one index scan, not one per partition.
 */
@Repository
class StreamRepository {

    /** Chunks of a stream are never older than the stream, but for clock steps: this much margin. */
    static final String PRUNE_MARGIN = "interval '1 hour'";

    private static final String VIEW_COLUMNS = """
            s.stream_id, s.chat_id, s.producer_id, s.state, s.last_seq, s.created_at, s.title, s.message_id, s.chat_seq, s.reason
            """.strip();

    /** 1: user id, 2: stream id. No row: no such stream; member false: the caller is not in its chat. */
    private static final String STREAM_FOR_USER = """
            SELECT %s, (m.user_id IS NOT NULL) AS member
            FROM streams s
            LEFT JOIN chat_members m ON m.chat_id = s.chat_id AND m.user_id = ?
            WHERE s.stream_id = ?
            """.formatted(VIEW_COLUMNS);

    /** 1: message id. The stream a (perhaps retried) open made. */
    private static final String STREAM_BY_MESSAGE = """
            SELECT %s FROM streams s WHERE s.message_id = ?
            """.formatted(VIEW_COLUMNS);

    /**
     * A page of chunks from {@code fromSeq} up to {@code toSeq}, stopping at the first chunk whose
     * predecessors (their data plus ~100 bytes each) already fill the byte budget (the first always
     * comes). 1: stream id, 2: from seq, 3: to seq, 4: the stream's created_at, 5: rows, 6: byte budget.
     */
    private static final String CHUNKS = """
            SELECT seq, data, blob_id, size, content_type, created_at FROM (
                SELECT p.*, sum(octet_length(coalesce(p.data, '')) + 100) OVER (ORDER BY p.seq)
                            - (octet_length(coalesce(p.data, '')) + 100) AS before
                FROM (SELECT seq, data, blob_id, size, content_type, created_at
                      FROM stream_chunks
                      WHERE stream_id = ? AND seq >= ? AND seq <= ? AND created_at >= ?::timestamptz - %s
                        AND created_at < now() + %s
                      ORDER BY seq
                      LIMIT ?) p
            ) w
            WHERE w.before < ?
            ORDER BY seq
            """.formatted(PRUNE_MARGIN, PRUNE_MARGIN);

    /** 1: text[] stream ids. The last seq and state of each, for the tails' poll. */
    private static final String HEADS = """
            SELECT stream_id, last_seq, state FROM streams WHERE stream_id = ANY (?::text[])
            """;

    /**
     * An upload begins: the blob's row, uploading, if its stream exists, is open and is the
     * caller's (checked before any byte of the body is read). 1: blob id, 2: content type, 3:
     * stream id, 4: producer.
     */
    private static final String BEGIN_UPLOAD = """
            INSERT INTO stream_blobs (blob_id, stream_id, content_type, size, sha256, state)
            SELECT ?, s.stream_id, ?, 0, NULL, 'uploading' FROM streams s
            WHERE s.stream_id = ? AND s.producer_id = ? AND s.state = 'open'
            RETURNING blob_id
            """;

    /**
     * The last part is in: the blob is stored, if its stream is still open (a stream completed
     * meanwhile keeps no blob it never named). 1: size, 2: sha256 (hex), 3: blob id.
     */
    private static final String STORE_UPLOAD = """
            UPDATE stream_blobs b SET state = 'stored', size = ?, sha256 = ?
            FROM streams s
            WHERE b.blob_id = ? AND b.state = 'uploading' AND s.stream_id = b.stream_id AND s.state = 'open'
            RETURNING b.blob_id
            """;

    /** 1: blob id. An upload that failed: its row goes, and the trigger queues its parts' removal (V8). */
    private static final String DROP_UPLOAD = """
            DELETE FROM stream_blobs WHERE blob_id = ? AND state = 'uploading'
            """;

    /** 1: cut-off in ms, 2: most. Uploads begun longer ago than the cut-off and never finished. */
    private static final String DROP_ABANDONED_UPLOADS = """
            DELETE FROM stream_blobs
            WHERE ctid = ANY (ARRAY(SELECT ctid FROM stream_blobs
                                    WHERE state = 'uploading' AND created_at < now() - (? * interval '1 millisecond')
                                    ORDER BY created_at LIMIT ?))
            """;

    /** 1: user id, 2: blob id. A stored blob's description, only for a member of its stream's chat. */
    private static final String BLOB_FOR_USER = """
            SELECT b.content_type, b.size, b.sha256
            FROM stream_blobs b
            JOIN streams s ON s.stream_id = b.stream_id
            JOIN chat_members m ON m.chat_id = s.chat_id AND m.user_id = ?
            WHERE b.blob_id = ? AND b.state = 'stored'
            """;

    /** 1: idle cut-off in ms, 2: how many. Open streams with no append for longer than the idle timeout. */
    private static final String IDLE = """
            SELECT stream_id FROM streams
            WHERE state = 'open' AND last_append_at < now() - (? * interval '1 millisecond')
            ORDER BY last_append_at
            LIMIT ?
            """;

    private final JdbcTemplate jdbc;

    StreamRepository(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    static StreamView view(ResultSet rs) throws SQLException {
        return new StreamView(rs.getString("stream_id"), rs.getString("chat_id"), rs.getString("producer_id"),
                rs.getString("state"), rs.getLong("last_seq"), rs.getTimestamp("created_at").toInstant().toString(),
                rs.getString("title"), rs.getString("message_id"), rs.getLong("chat_seq"), rs.getString("reason"));
    }

    static Chunk chunk(ResultSet rs, long committedAtMillis) throws SQLException {
        long size = rs.getLong("size");
        boolean blob = rs.getString("blob_id") != null;
        return new Chunk(rs.getLong("seq"), rs.getString("data"), rs.getString("blob_id"), blob ? size : null,
                rs.getString("content_type"), rs.getTimestamp("created_at").toInstant().toString(), committedAtMillis);
    }

    /** A stream and whether {@code userId} may read it. */
    record Access(StreamView stream, boolean member) {
    }

    Optional<Access> access(String streamId, String userId) {
        List<Access> found = jdbc.query(STREAM_FOR_USER, (rs, i) -> new Access(view(rs), rs.getBoolean("member")), userId, streamId);
        return found.stream().findFirst();
    }

    /** The stream, for a member of its chat; empty for anyone else (PROTOCOL.md §6: 404). */
    Optional<StreamView> forMember(String streamId, String userId) {
        return access(streamId, userId).filter(Access::member).map(Access::stream);
    }

    Optional<StreamView> byMessage(String messageId) {
        return jdbc.query(STREAM_BY_MESSAGE, (rs, i) -> view(rs), messageId).stream().findFirst();
    }

    /** Chunks {@code fromSeq..toSeq} of {@code stream}, at most {@code rows}, fewer past {@code byteBudget}. */
    List<Chunk> chunks(StreamView stream, long fromSeq, long toSeq, int rows, long byteBudget) {
        return chunks(stream.streamId(), stream.createdAt(), fromSeq, toSeq, rows, byteBudget);
    }

    List<Chunk> chunks(String streamId, String createdAt, long fromSeq, long toSeq, int rows, long byteBudget) {
        if (toSeq < fromSeq) {
            return List.of();
        }
        return jdbc.query(CHUNKS, (rs, i) -> chunk(rs, 0), streamId, fromSeq, toSeq, createdAt, rows, byteBudget);
    }

    /** One stream's head: its last seq and state. */
    record Head(long lastSeq, String state) {
    }

    Map<String, Head> heads(String[] streamIds) {
        Map<String, Head> out = new HashMap<>(streamIds.length * 2);
        jdbc.query(HEADS, rs -> {
            out.put(rs.getString(1), new Head(rs.getLong(2), rs.getString(3)));
        }, (Object) streamIds);
        return out;
    }

    /** Begins an upload; false when the stream is gone, closed or not {@code producerId}'s (the caller tells which). */
    boolean beginUpload(String blobId, String streamId, String producerId, String contentType) {
        return !jdbc.queryForList(BEGIN_UPLOAD, String.class, blobId, contentType, streamId, producerId).isEmpty();
    }

    /** Marks an upload stored; false when its stream was closed meanwhile (the caller then drops it). */
    boolean storeUpload(String blobId, long size, String sha256) {
        return !jdbc.queryForList(STORE_UPLOAD, String.class, size, sha256, blobId).isEmpty();
    }

    /** Drops an upload that failed or was refused; its parts' removal is queued by the trigger. */
    void dropUpload(String blobId) {
        jdbc.update(DROP_UPLOAD, blobId);
    }

    /** Drops up to {@code max} uploads begun more than {@code olderThanMillis} ago; returns how many. */
    int dropAbandonedUploads(long olderThanMillis, int max) {
        return jdbc.update(DROP_ABANDONED_UPLOADS, olderThanMillis, max);
    }

    /** A stored blob's description. */
    record Blob(String contentType, long size, String sha256) {
    }

    Optional<Blob> blobForMember(String blobId, String userId) {
        return jdbc.query(BLOB_FOR_USER, (rs, i) -> new Blob(rs.getString(1), rs.getLong(2), rs.getString(3)), userId, blobId)
                .stream().findFirst();
    }

    List<String> idle(long idleMillis, int max) {
        return jdbc.queryForList(IDLE, String.class, idleMillis, max);
    }

    static Timestamp ts(Instant i) {
        return Timestamp.from(i);
    }

    static List<String> ids(List<StreamView> views) {
        List<String> out = new ArrayList<>(views.size());
        views.forEach(v -> out.add(v.streamId()));
        return out;
    }
}
