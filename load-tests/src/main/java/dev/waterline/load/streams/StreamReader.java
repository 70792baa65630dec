package dev.waterline.load.streams;

import dev.waterline.load.clients.SeqCursor;

/** One subscription of a streams run's reader, reconciled as its frames arrive ({@link StreamVerdict#reconcile}). */
final class StreamReader {
    final ProducedStream stream;
    final long fromSeq;
    /** Advanced by the connection's event loop only; its {@code next} read by the run's thread. */
    final SeqCursor cursor;
    volatile boolean stateSeen;
    volatile boolean closedSeen;
    String finalState;
    long finalLastSeq;
    volatile Latency latency;

    StreamReader(ProducedStream stream, long fromSeq) {
        this.stream = stream;
        this.fromSeq = fromSeq;
        this.cursor = new SeqCursor(fromSeq);
    }

    void chunk(long seq, String data) {
        cursor.take(seq);
        Latency l = latency;
        int colon = data == null ? -1 : data.indexOf(':');
        if (l != null && colon > 0) {
            l.record(Long.parseLong(data, 0, colon, 10));
        }
    }

    /** The first {@code stream} frame is the state at the subscribe; a closed state after it is the end. */
    void state(String state, long lastSeq) {
        if (!stateSeen) {
            stateSeen = true;
            return;
        }
        if (!"open".equals(state)) {
            finalState = state;
            finalLastSeq = lastSeq;
            closedSeen = true;
        }
    }
}
