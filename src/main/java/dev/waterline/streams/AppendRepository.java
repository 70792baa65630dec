package dev.waterline.streams;

import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import dev.waterline.sql.Statement;
import dev.waterline.sql.Statements;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The appender's one transaction per batch: lock the batch's stream rows in id order and read what
 * the decisions need ({@link #READS}, {@link #STORED}), decide ({@link AppendDecider}), insert the
 * new chunks and raise each changed row's {@code last_seq} ({@link #INSERT_CHUNKS},
 * {@link #UPDATE_STREAMS}), commit. Every statement the appender runs is here.
 */
@Component
class AppendRepository {

    /** The database's clock, the batch's rows locked in id order, the requesters' memberships, the blobs named. */
    static final String READS = """
            SELECT now();
            SELECT stream_id, chat_id, producer_id, state, last_seq, created_at, last_append_at, title, message_id,
                   chat_seq, reason
            FROM streams WHERE stream_id = ANY (?::text[]) ORDER BY stream_id FOR UPDATE;
            SELECT r.stream_id, r.user_id
            FROM unnest(?::text[], ?::text[]) AS r(stream_id, user_id)
            JOIN streams s ON s.stream_id = r.stream_id
            JOIN chat_members m ON m.chat_id = s.chat_id AND m.user_id = r.user_id;
            SELECT blob_id, stream_id, size, content_type FROM stream_blobs WHERE blob_id = ANY (?::text[]) AND state = 'stored'
            """;

    /**
     * Stored chunks that requests of the batch send again (a producer's retry), to compare.
     * 1..4: pairwise arrays of stream id, first seq, last seq, the stream's created_at (as text).
     */
    static final String STORED = """
            SELECT c.stream_id, c.seq, c.data, c.blob_id, c.size, c.content_type, c.created_at
            FROM unnest(?::text[], ?::bigint[], ?::bigint[], ?::text[]) AS r(stream_id, lo, hi, since)
            JOIN stream_chunks c ON c.stream_id = r.stream_id AND c.seq BETWEEN r.lo AND r.hi
                                AND c.created_at >= r.since::timestamptz - interval '1 hour'
                                AND c.created_at < now() + interval '1 hour'
            """;

    /** 1: created_at (the transaction's now()), 2..7: pairwise arrays of stream id, seq, data, blob id, size, type. */
    static final String INSERT_CHUNKS = """
            INSERT INTO stream_chunks (stream_id, seq, created_at, data, blob_id, size, content_type)
            SELECT stream_id, seq, ?, data, blob_id, size, content_type
            FROM unnest(?::text[], ?::bigint[], ?::text[], ?::text[], ?::bigint[], ?::text[])
                 AS c(stream_id, seq, data, blob_id, size, content_type)
            """;

    /**
     * 1: now (for last_append_at of the streams appended to, and closed_at of those closed),
     * 2: now again, 3..7: pairwise arrays of stream id, last seq, state, reason, appended.
     */
    static final String UPDATE_STREAMS = """
            UPDATE streams s
            SET last_seq = v.last_seq, state = v.state, reason = v.reason,
                last_append_at = CASE WHEN v.appended THEN ?::timestamptz ELSE s.last_append_at END,
                closed_at = CASE WHEN v.state <> 'open' AND s.closed_at IS NULL THEN ?::timestamptz ELSE s.closed_at END
            FROM unnest(?::text[], ?::bigint[], ?::text[], ?::text[], ?::boolean[]) AS v(stream_id, last_seq, state, reason, appended)
            WHERE s.stream_id = v.stream_id
            """;

    private final StreamProperties properties;
    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;

    AppendRepository(StreamProperties properties, JdbcTemplate jdbc, PlatformTransactionManager transactions) {
        this.properties = properties;
        this.jdbc = jdbc;
        this.tx = new TransactionTemplate(transactions);
        this.tx.setTimeout((int) Math.max(1, properties.commitTimeout().toSeconds()));
    }

    /** Per request its decision, in order; the changes to hand over (committed at 0: the caller stamps them); counts. */
    record Outcome(List<AppendDecider.Decision> answers, List<Appender.Change> changes, int stored, List<String> closed) {
    }

    /** Decides and writes the requests in one transaction, committed when this returns; throws when it rolled back. */
    Outcome commit(List<AppendRequest> requests) {
        return tx.execute(status -> decideAndWrite(requests));
    }

    private Outcome decideAndWrite(List<AppendRequest> requests) {
        TreeSet<String> streamIds = new TreeSet<>();
        Set<List<String>> pairs = new HashSet<>();
        Set<String> blobIds = new HashSet<>();
        for (AppendRequest r : requests) {
            streamIds.add(r.streamId());
            if (r.userId() != null) {
                pairs.add(List.of(r.streamId(), r.userId()));
            }
            for (NewChunk c : r.chunks()) {
                if (c.blobId() != null) {
                    blobIds.add(c.blobId());
                }
            }
        }
        Timestamp[] now = new Timestamp[1];
        Map<String, AppendDecider.Row> rows = new HashMap<>();
        Set<List<String>> members = new HashSet<>();
        Map<String, AppendDecider.BlobMeta> blobs = new HashMap<>();
        String[] pairStreams = pairs.stream().map(p -> p.get(0)).toArray(String[]::new);
        String[] pairUsers = pairs.stream().map(p -> p.get(1)).toArray(String[]::new);
        Statements.run(jdbc, READS, List.of(
                rs -> now[0] = rs.getTimestamp(1),
                rs -> rows.put(rs.getString("stream_id"), row(rs)),
                rs -> members.add(List.of(rs.getString(1), rs.getString(2))),
                rs -> blobs.put(rs.getString(1), new AppendDecider.BlobMeta(rs.getString(2), rs.getLong(3), rs.getString(4)))),
                streamIds.toArray(String[]::new), pairStreams, pairUsers, blobIds.toArray(String[]::new));

        Map<String, Map<Long, Chunk>> stored = readRetried(AppendDecider.retried(requests, rows));
        AppendDecider.Facts facts = new AppendDecider.Facts(rows, stored, members, blobs, now[0].toInstant().toString(),
                now[0].getTime() - properties.idleTimeout().toMillis());
        List<AppendDecider.Decision> answers = AppendDecider.decideAll(requests, facts);

        List<Appender.Change> changes = new ArrayList<>();
        List<String> closed = new ArrayList<>();
        int storedCount = 0;
        List<Statement> writes = new ArrayList<>(2);
        List<AppendDecider.Row> changed = AppendDecider.changed(rows);
        int n = changed.stream().mapToInt(x -> x.added.size()).sum();
        if (n > 0) {
            String[] cStream = new String[n], cData = new String[n], cBlob = new String[n], cType = new String[n];
            long[] cSeq = new long[n];
            Long[] cSize = new Long[n];
            int i = 0;
            for (AppendDecider.Row x : changed) {
                for (Chunk c : x.added) {
                    cStream[i] = x.streamId;
                    cSeq[i] = c.getSeq();
                    cData[i] = c.getData();
                    cBlob[i] = c.getBlobId();
                    cSize[i] = c.getSize();
                    cType[i] = c.getContentType();
                    i++;
                }
            }
            writes.add(Statement.of(INSERT_CHUNKS, null, now[0], cStream, cSeq, cData, cBlob, cSize, cType));
            storedCount = n;
        }
        if (!changed.isEmpty()) {
            int m = changed.size();
            String[] uStream = new String[m], uState = new String[m], uReason = new String[m];
            long[] uLast = new long[m];
            boolean[] uAppended = new boolean[m];
            for (int i = 0; i < m; i++) {
                AppendDecider.Row x = changed.get(i);
                uStream[i] = x.streamId;
                uLast[i] = x.lastSeq;
                uState[i] = x.state;
                uReason[i] = x.reason;
                uAppended[i] = x.appended;
                changes.add(new Appender.Change(x.streamId, x.createdAt, List.copyOf(x.added), x.state, x.lastSeq, 0));
                if (!StreamView.OPEN.equals(x.state)) {
                    closed.add(StreamView.ABORTED.equals(x.state) && "idle".equals(x.reason) ? "idle" : x.state);
                }
            }
            writes.add(Statement.of(UPDATE_STREAMS, null, now[0], now[0], uStream, uLast, uState, uReason, uAppended));
            Statements.run(jdbc, writes);
        }
        return new Outcome(answers, changes, storedCount, closed);
    }

    private static AppendDecider.Row row(java.sql.ResultSet rs) throws java.sql.SQLException {
        return new AppendDecider.Row(new AppendDecider.Stored(rs.getString("stream_id"), rs.getString("chat_id"),
                rs.getString("producer_id"), rs.getString("state"), rs.getLong("last_seq"),
                rs.getTimestamp("created_at").toInstant().toString(), rs.getTimestamp("last_append_at").toInstant(),
                new AppendDecider.Opening(rs.getString("title"), rs.getString("message_id"), rs.getLong("chat_seq"),
                        rs.getString("reason"))));
    }

    /** The stored chunks that requests send again, by stream and seq (one query, only when there are any). */
    private Map<String, Map<Long, Chunk>> readRetried(List<AppendDecider.Retried> ranges) {
        Map<String, Map<Long, Chunk>> out = new HashMap<>();
        if (ranges.isEmpty()) {
            return out;
        }
        int k = ranges.size();
        String[] ids = new String[k], since = new String[k];
        long[] lo = new long[k], hi = new long[k];
        for (int i = 0; i < k; i++) {
            AppendDecider.Retried r = ranges.get(i);
            ids[i] = r.streamId();
            lo[i] = r.lo();
            hi[i] = r.hi();
            since[i] = r.since();
        }
        jdbc.query(STORED, rs -> {
            out.computeIfAbsent(rs.getString("stream_id"), x -> new HashMap<>()).put(rs.getLong("seq"), StreamRepository.chunk(rs, 0));
        }, ids, lo, hi, since);
        return out;
    }
}
