package dev.waterline.streams;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The appender's decisions, with no database: each request of a batch decided in arrival order
 * against its stream's row as the batch's earlier requests left it (S1: seq n + 1 only after n;
 * S2: a request is refused before anything of it is added; S3: a retry of chunks stored with the
 * same content is done and adds nothing). {@link AppendRepository} reads the {@link Facts} under the
 * rows' locks and writes what the decisions changed.
 */
final class AppendDecider {

    private AppendDecider() {
    }

    /** A request's answer: the stream as it now stands, or why nothing of it was done. */
    sealed interface Decision permits Done, Refused {
    }

    /** Done (for an append: its chunks are added, or were stored already). */
    record Done(StreamView view) implements Decision {
    }

    /** Refused: nothing of the request is stored. */
    record Refused(Refusal why) implements Decision {
    }

    /** A blob a chunk names: the stream it was uploaded to, its size and type. */
    record BlobMeta(String streamId, long size, String contentType) {
    }

    /** A stream row as stored, before the batch. */
    record Stored(String streamId, String chatId, String producerId, String state, long lastSeq, String createdAt,
                  Instant lastAppendAt, Opening opening) {
    }

    /** The stream's opening: its title, its chat message, that message's seq and (for an aborted stream) the reason. */
    record Opening(String title, String messageId, long chatSeq, String reason) {
    }

    /**
     * What one transaction read for its batch: the locked rows by stream id, the stored chunks
     * that requests send again (by stream and seq), the (stream, user) pairs of members, the blobs
     * named, the database's time as text ({@code at}) and the idle cutoff in epoch millis.
     */
    record Facts(Map<String, Row> rows, Map<String, Map<Long, Chunk>> stored, Set<List<String>> members,
                 Map<String, BlobMeta> blobs, String at, long idleCutoffMillis) {
    }

    /** A stream's range of seqs that requests of the batch send again (a producer's retry), to compare. */
    record Retried(String streamId, long lo, long hi, String since) {
    }

    /** One locked stream row, as the batch changes it. */
    static final class Row {
        final String streamId, chatId, producerId, createdAt, title, messageId;
        final long chatSeq, storedLastSeq;
        final Instant lastAppendAt;
        String state, reason;
        long lastSeq;
        boolean appended, changed;
        final List<Chunk> added = new ArrayList<>();

        Row(Stored s) {
            streamId = s.streamId();
            chatId = s.chatId();
            producerId = s.producerId();
            state = s.state();
            lastSeq = s.lastSeq();
            storedLastSeq = lastSeq;
            createdAt = s.createdAt();
            lastAppendAt = s.lastAppendAt();
            title = s.opening().title();
            messageId = s.opening().messageId();
            chatSeq = s.opening().chatSeq();
            reason = s.opening().reason();
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

    /** Every request of the batch, in arrival order, each against its row as the earlier ones left it. */
    static List<Decision> decideAll(List<AppendRequest> requests, Facts facts) {
        List<Decision> answers = new ArrayList<>(requests.size());
        for (AppendRequest r : requests) {
            Row row = facts.rows().get(r.streamId());
            answers.add(decide(r, row, row == null ? null : facts.stored().get(r.streamId()), facts));
        }
        return answers;
    }

    /** The rows the decisions changed, in stream id order (the order they are written in). */
    static List<Row> changed(Map<String, Row> rows) {
        return rows.values().stream().filter(x -> x.changed).sorted(Comparator.comparing(x -> x.streamId)).toList();
    }

    /** The stored chunks that requests send again, one range per stream (none when nothing is sent again). */
    static List<Retried> retried(List<AppendRequest> requests, Map<String, Row> rows) {
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
        List<Retried> out = new ArrayList<>(ranges.size());
        ranges.forEach((id, range) -> out.add(new Retried(id, range[0], range[1], rows.get(id).createdAt)));
        return out;
    }

    /** One request, decided against its stream's row as the batch's earlier requests left it. */
    static Decision decide(AppendRequest r, Row row, Map<Long, Chunk> stored, Facts facts) {
        if (row == null) {
            return new Refused(Refusal.notFound());
        }
        if (r.op() == AppendRequest.Op.IDLE_ABORT) {
            if (StreamView.OPEN.equals(row.state) && !row.appended && row.lastAppendAt.toEpochMilli() < facts.idleCutoffMillis()) {
                row.state = StreamView.ABORTED;
                row.reason = "idle";
                row.changed = true;
            }
            return new Done(row.view());
        }
        if (!r.userId().equals(row.producerId)) {
            return new Refused(facts.members().contains(List.of(r.streamId(), r.userId())) ? Refusal.forbidden() : Refusal.notFound());
        }
        return switch (r.op()) {
            case APPEND -> append(r, row, stored, facts);
            case COMPLETE -> complete(r, row);
            case ABORT -> abort(r, row);
            default -> throw new IllegalStateException("unknown op " + r.op());
        };
    }

    private static Decision append(AppendRequest r, Row row, Map<Long, Chunk> stored, Facts facts) {
        long last = row.lastSeq;
        if (row.closedState()) {
            return new Refused(Refusal.closed(row.state));
        }
        List<NewChunk> chunks = r.chunks();
        long first = chunks.getFirst().seq();
        if (first > last + 1) {
            return new Refused(Refusal.gap(last + 1));
        }
        List<Chunk> fresh = new ArrayList<>();
        for (NewChunk c : chunks) {
            if (c.seq() <= last) {
                Chunk have = row.at(c.seq(), stored);
                if (have == null || !have.sameContent(c)) {
                    return new Refused(Refusal.conflict(last + 1));
                }
                continue;
            }
            if (c.blobId() != null) {
                BlobMeta b = facts.blobs().get(c.blobId());
                if (b == null || !b.streamId().equals(row.streamId)) {
                    return new Refused(Refusal.invalid("blobId " + c.blobId() + " was not uploaded to this stream"));
                }
                fresh.add(new Chunk(c.seq(), null, c.blobId(), b.size(), b.contentType(), facts.at(), 0));
            }
            else {
                fresh.add(new Chunk(c.seq(), c.data(), null, null, null, facts.at(), 0));
            }
        }
        if (!fresh.isEmpty()) {
            row.added.addAll(fresh);
            row.lastSeq = fresh.getLast().getSeq();
            row.appended = true;
            row.changed = true;
        }
        return new Done(row.view());
    }

    private static Decision complete(AppendRequest r, Row row) {
        long last = row.lastSeq;
        if (StreamView.COMPLETE.equals(row.state)) {
            return r.lastSeq() == last ? new Done(row.view()) : new Refused(Refusal.closed(row.state));
        }
        if (row.closedState()) {
            return new Refused(Refusal.closed(row.state));
        }
        if (r.lastSeq() > last) {
            return new Refused(Refusal.gap(last + 1));
        }
        if (r.lastSeq() < last) {
            return new Refused(Refusal.conflict(last + 1));
        }
        row.state = StreamView.COMPLETE;
        row.changed = true;
        return new Done(row.view());
    }

    private static Decision abort(AppendRequest r, Row row) {
        if (StreamView.ABORTED.equals(row.state)) {
            return new Done(row.view());
        }
        if (row.closedState()) {
            return new Refused(Refusal.closed(row.state));
        }
        row.state = StreamView.ABORTED;
        row.reason = r.reason();
        row.changed = true;
        return new Done(row.view());
    }
}
