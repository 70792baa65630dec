package dev.waterline.streams;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import dev.waterline.metrics.WaterlineMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import org.springframework.stereotype.Component;

/**
 * The series of streams (PROTOCOL.md §5: {@code waterline_stream_chunks_total}, and more). No label
 * carries a stream, chat or user id.
 */
@Component
class StreamMetrics {

    static final String[] OUTCOMES = {"done", "gap", "conflict", "closed", "forbidden", "not_found", "invalid", "too_large",
            "unavailable", "overloaded", "rate_limited"};

    private final WaterlineMetrics metrics;
    private final Counter chunks;
    private final Counter opened;
    private final Counter completed;
    private final Counter aborted;
    private final Counter idle;
    private final Counter tailReads;
    private final Counter tailReadChunks;
    private final Counter replayChunks;
    private final Counter replayWaits;
    private final Counter handedOver;
    private final Counter missing;
    private final Counter frames;
    private final Counter poisoned;
    private final Counter sseExpired;
    private final Counter uploadDropsFailed;
    private final java.util.Map<String, Counter> outcomes = new java.util.HashMap<>();
    private final java.util.Map<String, Counter> answerWaitsFailed = new java.util.HashMap<>();
    private final Timer append;
    private final Timer delivery;
    private final java.util.concurrent.atomic.AtomicLong subscriptions = new java.util.concurrent.atomic.AtomicLong();

    StreamMetrics(WaterlineMetrics metrics) {
        this.metrics = metrics;
        chunks = metrics.counter("waterline.stream.chunks", "stream chunks stored");
        opened = metrics.counter("waterline.streams.opened", "streams opened (each with its chat message)");
        completed = metrics.counter("waterline.streams.closed", "streams closed, by how", "how", "complete");
        aborted = metrics.counter("waterline.streams.closed", "streams closed, by how", "how", "aborted");
        idle = metrics.counter("waterline.streams.closed", "streams closed, by how", "how", "idle");
        for (String o : OUTCOMES) {
            outcomes.put(o, metrics.counter("waterline.stream.requests", "appends, completions and aborts answered, by outcome",
                    "outcome", o));
        }
        tailReads = metrics.counter("waterline.stream.tail.reads",
                "reads of chunks from PostgreSQL by the shared tails (once per node for every subscriber there)");
        tailReadChunks = metrics.counter("waterline.stream.tail.read.chunks", "chunks the shared tails read from PostgreSQL");
        replayChunks = metrics.counter("waterline.stream.replay.chunks", "chunks read from PostgreSQL by subscribers' replays");
        replayWaits = metrics.counter("waterline.stream.replay.waits",
                "replay pages that found no turn at PostgreSQL within waterline.api.max-wait and waited again");
        handedOver = metrics.counter("waterline.stream.handover.chunks",
                "chunks fanned out by a tail as its node's appender handed them over after commit (no read)");
        missing = metrics.counter("waterline.stream.missing.chunks",
                "committed chunks a tail did not find (removed by retention before it read them)");
        frames = metrics.counter("waterline.stream.chunk.frames", "chunk frames and events written to subscribers");
        poisoned = metrics.poisoned(Appender.LOOP);
        sseExpired = metrics.counter("waterline.stream.events.expired",
                "server-sent event responses ended because their token expired (the client resumes with a fresh one)");
        for (String by : new String[] {"rest", "echo_bot"}) {
            answerWaitsFailed.put(by, metrics.counter("waterline.streams.answer.waits.failed",
                    "stream requests whose answer did not come in time (or whose wait failed): answered unavailable, outcome unknown",
                    "by", by));
        }
        uploadDropsFailed = metrics.counter("waterline.streams.upload.drops.failed",
                "failed blob uploads whose row could not be dropped at once (the sweep of abandoned uploads drops it later)");
        append = metrics.latencyTimer("waterline.stream.append",
                "an append, completion or abort received until its answer was decided (after commit)");
        delivery = metrics.latencyTimer("waterline.stream.delivery",
                "a chunk's commit until its chunk frame is written to a live subscriber's socket");
    }

    void gauges(Supplier<Number> tails, Supplier<Number> members) {
        metrics.gauge("waterline.stream.tails", "streams with a shared tail on this node", tails);
        metrics.gauge("waterline.stream.subscriptions", "subscriptions to streams on this node", subscriptions::get);
    }

    void opened() {
        opened.increment();
    }

    void answered(AppendRequest r, long nanos) {
        outcomes.get("done").increment();
        append.record(nanos, TimeUnit.NANOSECONDS);
    }

    void refused(String code) {
        Counter c = outcomes.get(code);
        if (c != null) {
            c.increment();
        }
    }

    void stored(int n, List<String> closed) {
        chunks.increment(n);
        for (String how : closed) {
            (how.equals("idle") ? idle : how.equals(StreamView.COMPLETE) ? completed : aborted).increment();
        }
    }

    void poisoned(int n) {
        poisoned.increment(n);
    }

    void subscribed() {
        subscriptions.incrementAndGet();
    }

    void unsubscribed() {
        subscriptions.decrementAndGet();
    }

    void replayWaited() {
        replayWaits.increment();
    }

    void replayed(int n) {
        replayChunks.increment(n);
    }

    void tailRead(int n) {
        tailReads.increment();
        tailReadChunks.increment(n);
    }

    void handedOver() {
        handedOver.increment();
    }

    void missing(long n) {
        missing.increment(n);
    }

    void frame() {
        frames.increment();
    }

    void delivered(long millis) {
        delivery.record(Math.max(0, millis), TimeUnit.MILLISECONDS);
    }

    void answerWaitFailed(String by) {
        answerWaitsFailed.get(by).increment();
    }

    void uploadDropFailed() {
        uploadDropsFailed.increment();
    }

    void sseExpired() {
        sseExpired.increment();
    }
}
