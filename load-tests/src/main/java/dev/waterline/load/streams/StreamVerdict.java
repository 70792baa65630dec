package dev.waterline.load.streams;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * A streams run's verdict ({@link StreamLoad}): whether it failed, what went wrong (refusals,
 * errors, closes: counted by kind, and written once into the report's section as its
 * {@link #errorsLine}), and the chunk-by-chunk reconciliation of its readers.
 */
final class StreamVerdict {

    private volatile boolean failed;

    private final Map<String, AtomicLong> problems = new ConcurrentHashMap<>();

    void count(String what) {
        problems.computeIfAbsent(what, k -> new AtomicLong()).incrementAndGet();
    }

    String errorsLine() {
        if (problems.isEmpty()) {
            return "No refusals, errors or closes.";
        }
        StringBuilder b = new StringBuilder("Seen: ");
        problems.forEach((k, v) -> b.append(k).append(" ×").append(v.get()).append("; "));
        problems.clear();
        return b.toString();
    }

    void awaitAll(List<StreamReader> rs, Predicate<StreamReader> done, String what, Duration drain) throws InterruptedException {
        long deadline = System.nanoTime() + drain.toNanos();
        for (StreamReader r : rs) {
            while (!done.test(r) && System.nanoTime() < deadline) {
                TimeUnit.MILLISECONDS.sleep(20);
            }
            if (!done.test(r)) {
                failed = true;
                count("not reached within the drain: " + what);
                return;
            }
        }
    }

    /** Every reader: the seqs from its fromSeq to the stream's last, each once, in order, and the final state with that last seq. */
    void reconcile(List<StreamReader> rs) {
        for (StreamReader r : rs) {
            long last = r.stream.ackedSeq.get();
            boolean ok = r.closedSeen && "complete".equals(r.finalState) && r.finalLastSeq == last
                    && r.cursor.next == last + 1 && r.cursor.duplicates == 0 && r.cursor.gaps == 0;
            if (!ok) {
                failed = true;
                count("reconciliation: stream " + r.stream.id + " from " + r.fromSeq + ": next " + r.cursor.next + " of " + last
                        + ", " + r.cursor.duplicates + " duplicates, " + r.cursor.gaps + " missing, final " + r.finalState + " " + r.finalLastSeq);
            }
        }
    }

    /** Something the run must not have: the report says RECONCILIATION FAILED and the command exits 2. */
    void fail(String what) {
        failed = true;
        count(what);
    }

    /** Marks the run failed without counting (the cause was counted where it was seen). */
    void fail() {
        failed = true;
    }

    boolean failed() {
        return failed;
    }
}
