package dev.waterline.streams;

import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

import dev.waterline.lifecycle.Batches;
import dev.waterline.lifecycle.Failures;
import dev.waterline.lifecycle.Isolation;
import dev.waterline.lifecycle.Loops;
import dev.waterline.lifecycle.Workers;
import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.sql.Statement;
import dev.waterline.sql.Statements;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Every change of a stream (appends, completions, aborts), group-committed like sends.
 *
 * <p>Loop ({@code writers} loops of {@link Loops}, each draining its own share of the bounded
 * queue, sharded by stream so that a stream's requests commit in arrival order): gather a batch
 * ({@link Batches}); in one transaction lock the batch's stream rows in id order and read their
 * {@code last_seq} and state (S1: the seed's pessimistic reservation: no other transaction can
 * append to a locked stream, so its chunks commit in seq order and a reader never sees seq n + 1
 * before n), decide every request in arrival order against what the rows say and what the batch's
 * earlier requests did, insert the chunks, raise each row's {@code last_seq}; commit; only then
 * answer each request and hand the committed chunks over to this node's tails ({@link Tails}) in
 * memory and to the other nodes' ({@link StreamSignals}). A request is stored whole or not at all
 * (S2): it is refused before anything of it is written. A retry of chunks already stored with the
 * same content is acknowledged and writes nothing (S3). A database that cannot be reached answers
 * the batch {@code unavailable}; a failure of one request's data is split down to it
 * ({@link Isolation}); a chunk whose time has no partition yet (the maintenance loop is behind)
 * answers the batch {@code unavailable} and wakes the maintenance.
 */
@Component
class Appender implements SmartLifecycle {

    private static final Log log = LogFactory.getLog(Appender.class);
    static final String LOOP = "stream_append";

    /** The database's clock, the batch's rows locked in id order, the requesters' memberships, the blobs named. */
    private static final String READS = """
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
    private static final String STORED = """
            SELECT c.stream_id, c.seq, c.data, c.blob_id, c.size, c.content_type, c.created_at
            FROM unnest(?::text[], ?::bigint[], ?::bigint[], ?::text[]) AS r(stream_id, lo, hi, since)
            JOIN stream_chunks c ON c.stream_id = r.stream_id AND c.seq BETWEEN r.lo AND r.hi
                                AND c.created_at >= r.since::timestamptz - interval '1 hour'
                                AND c.created_at < now() + interval '1 hour'
            """;

    /** 1: created_at (the transaction's now()), 2..7: pairwise arrays of stream id, seq, data, blob id, size, type. */
    private static final String INSERT_CHUNKS = """
            INSERT INTO stream_chunks (stream_id, seq, created_at, data, blob_id, size, content_type)
            SELECT stream_id, seq, ?, data, blob_id, size, content_type
            FROM unnest(?::text[], ?::bigint[], ?::text[], ?::text[], ?::bigint[], ?::text[])
                 AS c(stream_id, seq, data, blob_id, size, content_type)
            """;

    /**
     * 1: now (for last_append_at of the streams appended to, and closed_at of those closed),
     * 2: now again, 3..7: pairwise arrays of stream id, last seq, state, reason, appended.
     */
    private static final String UPDATE_STREAMS = """
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
    private final Loops loops;
    private final Tails tails;
    private final StreamSignals signals;
    private final ChunkPartitions partitions;
    private final StreamMetrics metrics;
    private final List<BlockingQueue<AppendRequest>> queues = new ArrayList<>();
    private final List<Thread> writers = new ArrayList<>();
    private List<Thread> previous = List.of();
    private volatile boolean running;

    Appender(StreamProperties properties, JdbcTemplate jdbc, PlatformTransactionManager transactions, Loops loops, Tails tails,
             StreamSignals signals, ChunkPartitions partitions, StreamMetrics metrics, WaterlineMetrics waterline) {
        this.properties = properties;
        this.jdbc = jdbc;
        this.loops = loops;
        this.tails = tails;
        this.signals = signals;
        this.partitions = partitions;
        this.metrics = metrics;
        this.tx = new TransactionTemplate(transactions);
        this.tx.setTimeout((int) Math.max(1, properties.commitTimeout().toSeconds()));
        int perWriter = Math.max(1, properties.queueSize() / properties.writers());
        for (int i = 0; i < properties.writers(); i++) {
            queues.add(new ArrayBlockingQueue<>(perWriter));
        }
        waterline.gauge("waterline.stream.append.queue.depth", "stream appends and completions waiting to be committed",
                () -> queues.stream().mapToInt(BlockingQueue::size).sum());
        waterline.poisoned(LOOP);
    }

    /**
     * Queues a request; false when its queue is full (answer {@code overloaded}) or the service is
     * stopping (answer {@code unavailable}). A stream always goes to the same writer.
     */
    boolean offer(AppendRequest request) {
        BlockingQueue<AppendRequest> queue = queues.get(Math.floorMod(request.streamId().hashCode(), queues.size()));
        if (!running || !queue.offer(request)) {
            return false;
        }
        return running || !queue.remove(request);
    }

    boolean isAccepting() {
        return running;
    }

    private void writeOne(BlockingQueue<AppendRequest> queue, List<AppendRequest> batch) throws InterruptedException {
        try {
            if (Batches.gather(queue, batch, properties.batchSize(), properties.linger().toNanos(), 100)) {
                persist(batch);
            }
        }
        finally {
            batch.clear();
        }
    }

    void persist(List<AppendRequest> batch) {
        int poisoned = Isolation.commit(new ArrayList<>(batch), this::commit, (r, e) -> {
            loops.failed(LOOP, "a request to stream " + r.streamId() + " failed its group commit alone and is refused as invalid", e);
            answer(r, Refusal.invalid("the request could not be stored; nothing of it was"));
        });
        if (poisoned > 0) {
            metrics.poisoned(poisoned);
        }
    }

    /** Commits the requests and answers them; throws only for a failure one of them may have caused. */
    private void commit(List<AppendRequest> requests) {
        Outcome outcome;
        try {
            outcome = tx.execute(status -> decideAndWrite(requests));
        }
        catch (RuntimeException e) {
            if (ChunkPartitions.missingPartition(e)) {
                partitions.wake();
                loops.failed(LOOP, "no partition of stream_chunks for now: " + requests.size() + " requests refused (unavailable)", e);
                refuseAll(requests, Refusal.unavailable("the server is not ready to store chunks; nothing stored, retry"));
                return;
            }
            if (Failures.causedByItem(e)) {
                throw e;
            }
            loops.failed(LOOP, requests.size() + " stream requests refused (unavailable)", e);
            refuseAll(requests, Refusal.unavailable(Failures.infrastructure(e)
                    ? "the database could not be reached; nothing stored" : "the server could not store this; nothing stored, retry"));
            return;
        }
        long committedAt = System.currentTimeMillis();
        // Committed: nothing from here on may throw back into the isolation (it would commit again).
        for (int i = 0; i < requests.size(); i++) {
            AppendRequest r = requests.get(i);
            Object o = outcome.answers().get(i);
            if (o instanceof Refusal why) {
                answer(r, why);
            }
            else {
                StreamView view = (StreamView) o;
                try {
                    r.reply().done(view);
                }
                catch (RuntimeException e) {
                    loops.failed(LOOP, "answering a stream request", e);
                }
                metrics.answered(r, System.nanoTime() - r.receivedNanos());
            }
        }
        metrics.stored(outcome.stored(), outcome.closed());
        if (!outcome.changes().isEmpty()) {
            List<Change> changes = new ArrayList<>(outcome.changes().size());
            for (Change c : outcome.changes()) {
                changes.add(c.committedAt(committedAt));
            }
            try {
                tails.committed(changes);
            }
            catch (RuntimeException e) {
                // committed: the tails' poll finds what they were not handed
                loops.failed(LOOP, "handing committed chunks to this node's tails", e);
            }
            try {
                signals.changed(changes.stream().map(c -> new StreamSignals.Signal(c.streamId(), c.lastSeq(), c.state())).toList());
            }
            catch (RuntimeException e) {
                loops.failed(LOOP, "signalling committed chunks to the other nodes", e);
            }
        }
    }

    private void answer(AppendRequest r, Refusal why) {
        metrics.refused(why.code());
        try {
            r.reply().refused(why);
        }
        catch (RuntimeException e) {
            loops.failed(LOOP, "answering a stream request", e);
        }
    }

    private void refuseAll(List<AppendRequest> requests, Refusal why) {
        requests.forEach(r -> answer(r, why));
    }

    /** A stream's committed change, for its tails: its new chunks in seq order, and its state after the batch. */
    record Change(String streamId, String createdAt, List<Chunk> chunks, String state, long lastSeq, long committedAtMillis) {

        Change committedAt(long millis) {
            List<Chunk> stamped = new ArrayList<>(chunks.size());
            for (Chunk c : chunks) {
                stamped.add(new Chunk(c.getSeq(), c.getData(), c.getBlobId(), c.getSize(), c.getContentType(), c.getAt(), millis));
            }
            return new Change(streamId, createdAt, stamped, state, lastSeq, millis);
        }
    }

    /** Per request its answer (a {@link StreamView} or a {@link Refusal}); the changes to hand over; counts. */
    private record Outcome(List<Object> answers, List<Change> changes, int stored, List<String> closed) {
    }

    /** One locked stream row, as the batch changes it. */
    private static final class Row {
        final String streamId, chatId, producerId, createdAt, title, messageId;
        final long chatSeq, storedLastSeq;
        final Timestamp lastAppendAt;
        String state, reason;
        long lastSeq;
        boolean appended, changed;
        final List<Chunk> added = new ArrayList<>();

        Row(java.sql.ResultSet rs) throws java.sql.SQLException {
            streamId = rs.getString("stream_id");
            chatId = rs.getString("chat_id");
            producerId = rs.getString("producer_id");
            state = rs.getString("state");
            lastSeq = rs.getLong("last_seq");
            storedLastSeq = lastSeq;
            createdAt = rs.getTimestamp("created_at").toInstant().toString();
            lastAppendAt = rs.getTimestamp("last_append_at");
            title = rs.getString("title");
            messageId = rs.getString("message_id");
            chatSeq = rs.getLong("chat_seq");
            reason = rs.getString("reason");
        }

        boolean closedState() {
            return !StreamView.OPEN.equals(state);
        }

        StreamView view() {
            return new StreamView(streamId, chatId, producerId, state, lastSeq, createdAt, title, messageId, chatSeq, reason);
        }

        /** A chunk of this stream at {@code seq} as stored before the batch or added by it; null if none. */
        Chunk at(long seq, Map<Long, Chunk> stored) {
            if (seq > storedLastSeq) {
                int i = (int) (seq - storedLastSeq - 1);
                return i < added.size() ? added.get(i) : null;
            }
            return stored == null ? null : stored.get(seq);
        }
    }

    private record BlobMeta(String streamId, long size, String contentType) {
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
        Map<String, Row> rows = new HashMap<>();
        Set<List<String>> members = new HashSet<>();
        Map<String, BlobMeta> blobs = new HashMap<>();
        String[] pairStreams = pairs.stream().map(p -> p.get(0)).toArray(String[]::new);
        String[] pairUsers = pairs.stream().map(p -> p.get(1)).toArray(String[]::new);
        Statements.run(jdbc, READS, List.of(
                rs -> now[0] = rs.getTimestamp(1),
                rs -> rows.put(rs.getString("stream_id"), new Row(rs)),
                rs -> members.add(List.of(rs.getString(1), rs.getString(2))),
                rs -> blobs.put(rs.getString(1), new BlobMeta(rs.getString(2), rs.getLong(3), rs.getString(4)))),
                streamIds.toArray(String[]::new), pairStreams, pairUsers, blobIds.toArray(String[]::new));

        Map<String, Map<Long, Chunk>> stored = readRetried(requests, rows);
        String at = now[0].toInstant().toString();
        long idleCutoff = now[0].getTime() - properties.idleTimeout().toMillis();

        List<Object> answers = new ArrayList<>(requests.size());
        for (AppendRequest r : requests) {
            Row row = rows.get(r.streamId());
            answers.add(decide(r, row, row == null ? null : stored.get(r.streamId()), members, blobs, at, idleCutoff));
        }

        List<Change> changes = new ArrayList<>();
        List<String> closed = new ArrayList<>();
        int storedCount = 0;
        List<Statement> writes = new ArrayList<>(2);
        List<Row> changed = rows.values().stream().filter(x -> x.changed).sorted(java.util.Comparator.comparing(x -> x.streamId)).toList();
        int n = changed.stream().mapToInt(x -> x.added.size()).sum();
        if (n > 0) {
            String[] cStream = new String[n], cData = new String[n], cBlob = new String[n], cType = new String[n];
            long[] cSeq = new long[n];
            Long[] cSize = new Long[n];
            int i = 0;
            for (Row x : changed) {
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
                Row x = changed.get(i);
                uStream[i] = x.streamId;
                uLast[i] = x.lastSeq;
                uState[i] = x.state;
                uReason[i] = x.reason;
                uAppended[i] = x.appended;
                changes.add(new Change(x.streamId, x.createdAt, List.copyOf(x.added), x.state, x.lastSeq, 0));
                if (!StreamView.OPEN.equals(x.state)) {
                    closed.add(StreamView.ABORTED.equals(x.state) && "idle".equals(x.reason) ? "idle" : x.state);
                }
            }
            writes.add(Statement.of(UPDATE_STREAMS, null, now[0], now[0], uStream, uLast, uState, uReason, uAppended));
            Statements.run(jdbc, writes);
        }
        return new Outcome(answers, changes, storedCount, closed);
    }

    /** The stored chunks that requests send again, by stream and seq (one query, only when there are any). */
    private Map<String, Map<Long, Chunk>> readRetried(List<AppendRequest> requests, Map<String, Row> rows) {
        Map<String, long[]> ranges = new LinkedHashMap<>();
        for (AppendRequest r : requests) {
            Row row = rows.get(r.streamId());
            if (r.op() != AppendRequest.Op.APPEND || row == null || r.chunks().isEmpty()) {
                continue;
            }
            long lo = r.chunks().getFirst().seq();
            long hi = Math.min(r.chunks().getLast().seq(), row.storedLastSeq);
            if (lo <= hi) {
                ranges.merge(r.streamId(), new long[] {lo, hi}, (a, b) -> new long[] {Math.min(a[0], b[0]), Math.max(a[1], b[1])});
            }
        }
        Map<String, Map<Long, Chunk>> out = new HashMap<>();
        if (ranges.isEmpty()) {
            return out;
        }
        int k = ranges.size();
        String[] ids = new String[k], since = new String[k];
        long[] lo = new long[k], hi = new long[k];
        int i = 0;
        for (var e : ranges.entrySet()) {
            ids[i] = e.getKey();
            lo[i] = e.getValue()[0];
            hi[i] = e.getValue()[1];
            since[i] = rows.get(e.getKey()).createdAt;
            i++;
        }
        jdbc.query(STORED, rs -> {
            out.computeIfAbsent(rs.getString("stream_id"), x -> new HashMap<>()).put(rs.getLong("seq"), StreamStore.chunk(rs, 0));
        }, ids, lo, hi, since);
        return out;
    }

    /** One request, decided against its stream's row as the batch's earlier requests left it. */
    private Object decide(AppendRequest r, Row row, Map<Long, Chunk> stored, Set<List<String>> members,
                          Map<String, BlobMeta> blobs, String at, long idleCutoff) {
        if (row == null) {
            return Refusal.notFound();
        }
        if (r.op() == AppendRequest.Op.IDLE_ABORT) {
            if (StreamView.OPEN.equals(row.state) && !row.appended && row.lastAppendAt.getTime() < idleCutoff) {
                row.state = StreamView.ABORTED;
                row.reason = "idle";
                row.changed = true;
            }
            return row.view();
        }
        if (!r.userId().equals(row.producerId)) {
            return members.contains(List.of(r.streamId(), r.userId())) ? Refusal.forbidden() : Refusal.notFound();
        }
        long last = row.lastSeq;
        switch (r.op()) {
            case APPEND -> {
                if (row.closedState()) {
                    return Refusal.closed(row.state);
                }
                List<NewChunk> chunks = r.chunks();
                long first = chunks.getFirst().seq();
                if (first > last + 1) {
                    return Refusal.gap(last + 1);
                }
                List<Chunk> fresh = new ArrayList<>();
                for (NewChunk c : chunks) {
                    if (c.seq() <= last) {
                        Chunk have = row.at(c.seq(), stored);
                        if (have == null || !have.sameContent(c)) {
                            return Refusal.conflict(last + 1);
                        }
                        continue;
                    }
                    if (c.blobId() != null) {
                        BlobMeta b = blobs.get(c.blobId());
                        if (b == null || !b.streamId().equals(row.streamId)) {
                            return Refusal.invalid("blobId " + c.blobId() + " was not uploaded to this stream");
                        }
                        fresh.add(new Chunk(c.seq(), null, c.blobId(), b.size(), b.contentType(), at, 0));
                    }
                    else {
                        fresh.add(new Chunk(c.seq(), c.data(), null, null, null, at, 0));
                    }
                }
                if (!fresh.isEmpty()) {
                    row.added.addAll(fresh);
                    row.lastSeq = fresh.getLast().getSeq();
                    row.appended = true;
                    row.changed = true;
                }
                return row.view();
            }
            case COMPLETE -> {
                if (StreamView.COMPLETE.equals(row.state)) {
                    return r.lastSeq() == last ? row.view() : Refusal.closed(row.state);
                }
                if (row.closedState()) {
                    return Refusal.closed(row.state);
                }
                if (r.lastSeq() > last) {
                    return Refusal.gap(last + 1);
                }
                if (r.lastSeq() < last) {
                    return Refusal.conflict(last + 1);
                }
                row.state = StreamView.COMPLETE;
                row.changed = true;
                return row.view();
            }
            case ABORT -> {
                if (StreamView.ABORTED.equals(row.state)) {
                    return row.view();
                }
                if (row.closedState()) {
                    return Refusal.closed(row.state);
                }
                row.state = StreamView.ABORTED;
                row.reason = r.reason();
                row.changed = true;
                return row.view();
            }
            default -> throw new IllegalStateException("unknown op " + r.op());
        }
    }

    @Override
    public void start() {
        Workers.joinUntil(previous, System.nanoTime() + properties.commitTimeout().plusSeconds(1).toNanos());
        running = true;
        for (int i = 0; i < properties.writers(); i++) {
            BlockingQueue<AppendRequest> queue = queues.get(i);
            List<AppendRequest> batch = new ArrayList<>(properties.batchSize());
            writers.add(loops.start(LOOP, "stream-append-" + i, () -> running || !queue.isEmpty(), () -> writeOne(queue, batch)));
        }
    }

    /**
     * Shutdown, like ingest's: new requests are refused {@code unavailable}; the writers commit what
     * is queued within the commit timeout; what is left then is answered {@code unavailable}.
     */
    @Override
    public void stop() {
        running = false;
        Workers.joinUntil(writers, System.nanoTime() + properties.commitTimeout().toNanos());
        List<AppendRequest> left = new ArrayList<>();
        queues.forEach(q -> q.drainTo(left));
        if (!left.isEmpty()) {
            log.warn(left.size() + " queued stream requests not committed at shutdown: answered unavailable");
            refuseAll(left, Refusal.unavailable("the server is shutting down; nothing stored, retry"));
        }
        Workers.joinUntil(writers, System.nanoTime() + properties.commitTimeout().plusSeconds(1).toNanos());
        previous = List.copyOf(writers);
        writers.clear();
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Stops with ingest, before the gateway closes the sockets that wait for the answers. */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 1;
    }
}
