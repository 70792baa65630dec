package dev.waterline.load.run;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/** Counters and latency histograms (microseconds) shared by every simulated client. */
public final class Stats {

    public final LongAdder offered = new LongAdder();
    public final LongAdder skippedOffline = new LongAdder();
    /** Offered sends not made because the client's window of unanswered sends was full (--window) or it was backing off after an overloaded (--overload-backoff). */
    public final LongAdder heldByWindow = new LongAdder();
    public final LongAdder sent = new LongAdder();
    /** Typing frames written (--typing-share): not sends, never answered. */
    public final LongAdder typing = new LongAdder();
    /** Edits, deletes and reactions offered (--entry-mix, --delete-mix) that went as sends: the client had no message to change yet. */
    public final LongAdder entriesWithoutTarget = new LongAdder();
    /** Reacts accepted as changing nothing (no new entry: PROTOCOL.md §9). */
    public final LongAdder unchangedEntries = new LongAdder();
    public final LongAdder resent = new LongAdder();
    public final LongAdder accepted = new LongAdder();
    public final LongAdder deliveries = new LongAdder();
    public final LongAdder acksSent = new LongAdder();
    public final LongAdder syncedMessages = new LongAdder();
    public final LongAdder reconnects = new LongAdder();
    /** Reconnects whose resync ended (read nothing or something: a client that missed nothing reads an empty page). */
    public final LongAdder reconnectResyncs = new LongAdder();
    public final Map<String, LongAdder> rejectedByCode = new ConcurrentHashMap<>();
    public final Map<String, LongAdder> errorsByCode = new ConcurrentHashMap<>();
    public final Map<Integer, LongAdder> closesByCode = new ConcurrentHashMap<>();
    /** Failed (re)connect attempts by phase and cause, e.g. "welcome: TimeoutException". */
    public final Map<String, LongAdder> connectFailures = new ConcurrentHashMap<>();
    public final AtomicLong outboxDepthMax = new AtomicLong();
    public final AtomicLong heapMax = new AtomicLong();
    public final AtomicLong rssMax = new AtomicLong();
    /** Accepted sends in each whole second while load was offered, in order. */
    public final List<Long> acceptedEachSecond = Collections.synchronizedList(new ArrayList<>());

    /** send → accepted, µs. */
    public final Histogram acceptLatency = new ConcurrentHistogram(3_600_000_000L, 3);
    /** --kill-node-at: the killed node's clients, and per client kill → reconnected elsewhere and resynced, µs. */
    public final AtomicLong killedClients = new AtomicLong();
    public final Histogram killRecovery = new ConcurrentHistogram(3_600_000_000L, 3);
    /** Connections made to a node other than the client's own (it failed over). */
    public final java.util.concurrent.atomic.LongAdder failovers = new java.util.concurrent.atomic.LongAdder();

    /** Reconnect storm: clients dropped at once, and per client drop → reconnected and resynced, µs. */
    public final AtomicLong stormClients = new AtomicLong();
    public final Histogram stormRecovery = new ConcurrentHistogram(3_600_000_000L, 3);
    /** send → first live delivery to a recipient, µs. */
    public final Histogram deliverLatency = new ConcurrentHistogram(3_600_000_000L, 3);
    /**
     * Offered → written to the socket by the generator, µs: the generator's own lag, which every
     * latency above includes (a send is timed from when it was due, not from when it went out).
     */
    final Histogram writeLag = new ConcurrentHistogram(3_600_000_000L, 3);
    /** Per-second view of the load, set when the load starts. */
    public volatile Timeline timeline;
    /** As {@link #deliverLatency}, for sends issued in the load's second half (warm-up excluded). */
    final Histogram deliverLatencySteady = new ConcurrentHistogram(3_600_000_000L, 3);

    public void rejected(String code) {
        rejectedByCode.computeIfAbsent(code, k -> new LongAdder()).increment();
    }

    public void error(String code) {
        errorsByCode.computeIfAbsent(code, k -> new LongAdder()).increment();
    }

    public void connectFailed(String phase, Throwable cause) {
        Throwable c = cause instanceof java.util.concurrent.ExecutionException && cause.getCause() != null ? cause.getCause() : cause;
        connectFailures.computeIfAbsent(phase + ": " + c.getClass().getSimpleName(), k -> new LongAdder()).increment();
    }

    public void closed(int code) {
        closesByCode.computeIfAbsent(code, k -> new LongAdder()).increment();
    }

    /** A send's first live delivery: the whole run's, the second half's and the timeline's histograms. */
    public void delivered(long sentNanos, long secondHalfFromNanos) {
        record(deliverLatency, sentNanos);
        if (sentNanos >= secondHalfFromNanos) {
            record(deliverLatencySteady, sentNanos);
        }
        Timeline t = timeline;
        if (t != null) {
            t.delivered(sentNanos);
        }
    }

    /** A send's first write is on the socket: the generator's own lag since it was due. */
    public void written(long offeredNanos) {
        record(writeLag, offeredNanos);
        Timeline t = timeline;
        if (t != null) {
            t.written(offeredNanos);
        }
    }

    public static void record(Histogram h, long startNanos) {
        long micros = Math.max(1, (System.nanoTime() - startNanos) / 1000);
        h.recordValue(Math.min(micros, h.getHighestTrackableValue()));
    }

    /**
     * The steady accepted rate: the median of the per-second counts over the second half of the
     * offered load, so that neither the ramp nor the JIT's warm-up counts.
     */
    long steadyAcceptedPerSecond() {
        synchronized (acceptedEachSecond) {
            return medianOfSecondHalf(acceptedEachSecond);
        }
    }

    /** {@code count} events over {@code nanos} as a rate per second. */
    public static long perSecond(long count, long nanos) {
        return nanos <= 0 ? 0 : Math.round(count * 1e9 / nanos);
    }

    /** The median of the second half of {@code perSecond} (the upper middle of an even count); 0 for none. */
    public static long medianOfSecondHalf(List<Long> perSecond) {
        if (perSecond.isEmpty()) {
            return 0;
        }
        List<Long> half = new ArrayList<>(perSecond.subList(perSecond.size() / 2, perSecond.size()));
        Collections.sort(half);
        return half.get(half.size() / 2);
    }

    public static void max(AtomicLong m, long v) {
        m.accumulateAndGet(v, Math::max);
    }
}
