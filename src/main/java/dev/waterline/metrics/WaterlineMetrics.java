package dev.waterline.metrics;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.stream.Stream;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.stereotype.Component;

/**
 * Every series PROTOCOL.md §5 names, with dotted Micrometer names that export as the listed
 * Prometheus names (counters gain {@code _total}). Tagged counters are registered for every tag
 * value up front.
 */
@Component
public class WaterlineMetrics {

    public static final String[] REJECT_REASONS = {
            "overloaded", "rate_limited", "invalid", "too_large", "not_found", "unavailable"};
    /**
     * Why a client left live delivery: the three reapers of PROTOCOL.md §5, a token past its
     * {@code exp} (4001), a socket the server could not write to (1011), and a client that does not
     * read: its queue past the send buffer, or one write in flight past the send time (4008).
     */
    public static final String[] REAPERS = {"idle", "overload", "attempts", "expired", "write_failed", "send_buffer",
            "send_time"};

    private static final Log log = LogFactory.getLog(WaterlineMetrics.class);
    private static final Path STATM = Path.of("/proc/self/statm");

    private final MeterRegistry registry;
    private final Counter accepted;
    private final Counter fastDeliveries;
    private final Counter pollerDeliveries;
    private final Counter acks;
    private final Counter outboxRows;
    private final DistributionSummary batchSize;
    private final Timer batchCommit;
    private final Timer sendAccept;
    private final Timer fastDelivery;
    private final Timer pollerDelivery;
    private final AtomicLong outboxDepth = new AtomicLong();
    private final AtomicLong outboxOldestAgeSeconds = new AtomicLong();
    private final AtomicLong safeDeleteId = new AtomicLong();
    private final Counter residentFailures;
    /**
     * When a failed reading was last logged: at most one line a minute (lifecycle's ThrottledLog
     * is out of reach here, lifecycle calling metrics; a scrape reads the gauge a few times a minute).
     */
    private final AtomicLong residentFailureLoggedNanos = new AtomicLong(System.nanoTime() - TimeUnit.MINUTES.toNanos(2));

    public WaterlineMetrics(MeterRegistry registry) {
        this.registry = registry;
        accepted = Counter.builder("waterline.messages.accepted").description("sends committed").register(registry);
        fastDeliveries = deliveries("fast");
        pollerDeliveries = deliveries("poller");
        acks = Counter.builder("waterline.acks").description("deliveries acked").register(registry);
        outboxRows = Counter.builder("waterline.outbox.rows")
                .description("outbox rows committed: one per recipient of each accepted message (deliveries per row is the delivery ratio)")
                .register(registry);
        batchSize = DistributionSummary.builder("waterline.inbound.batch.size")
                .description("sends per group-commit transaction").register(registry);
        batchCommit = Timer.builder("waterline.inbound.batch.commit")
                .description("duration of one group-commit transaction").register(registry);
        sendAccept = latency(Timer.builder("waterline.send.accept")
                .description("a send frame read until its accepted frame is written to the socket"));
        fastDelivery = latency(Timer.builder("waterline.delivery").tag("path", "fast")
                .description("a message's commit until its message frame is written to the recipient's socket"));
        pollerDelivery = latency(Timer.builder("waterline.delivery").tag("path", "poller")
                .description("a message's commit until its message frame is written to the recipient's socket"));
        for (String reason : REJECT_REASONS) {
            rejected(reason);
        }
        for (String reaper : REAPERS) {
            withdrawals(reaper);
        }
        Gauge.builder("waterline.outbox.depth", outboxDepth, AtomicLong::get)
                .description("rows in the outbox (the span of ids from the oldest row to the newest: an upper bound"
                        + " by the ids of inserts that rolled back)").register(registry);
        Gauge.builder("waterline.outbox.oldest.age.seconds", outboxOldestAgeSeconds, AtomicLong::get)
                .description("age of the oldest outbox row").register(registry);
        Gauge.builder("waterline.safe.delete.id", safeDeleteId, AtomicLong::get)
                .description("the current reclaim line").register(registry);
        residentFailures = Counter.builder("waterline.process.resident.memory.failures")
                .description("readings of /proc/self/statm that failed (the resident memory gauge then reads NaN)")
                .register(registry);
        Gauge.builder("waterline.process.resident.memory.bytes", this, WaterlineMetrics::residentBytes)
                .description("resident set size of this process (Linux; NaN elsewhere, or when it cannot be read)")
                .register(registry);
    }

    /**
     * Histogram buckets that resolve 1 ms to 10 s (1-2-5 steps), and on to a minute, the same for
     * every latency, so that dashboards and alerts can use {@code histogram_quantile} on any of
     * them. The buckets past 10 s are for the poller's path: a row is first due one lease after
     * its commit (10 s by default), so every poller delivery is at least that late.
     */
    static final Duration[] LATENCY_BUCKETS = Stream.of(
            1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 15_000, 20_000, 30_000, 60_000)
            .map(Duration::ofMillis).toArray(Duration[]::new);

    private Timer latency(Timer.Builder builder) {
        return builder.serviceLevelObjectives(LATENCY_BUCKETS)
                .minimumExpectedValue(LATENCY_BUCKETS[0])
                .maximumExpectedValue(LATENCY_BUCKETS[LATENCY_BUCKETS.length - 1])
                .register(registry);
    }

    /** A send's {@code accepted} frame written, {@code nanos} after the send frame was read. */
    public void sendAccepted(long nanos) {
        sendAccept.record(nanos, TimeUnit.NANOSECONDS);
    }

    /** A message frame written to its recipient's socket, {@code millis} after its message was committed. */
    public void deliveryLatency(boolean fastPath, long millis) {
        (fastPath ? fastDelivery : pollerDelivery).record(Math.max(0, millis), TimeUnit.MILLISECONDS);
    }

    /**
     * The resident set from {@code /proc/self/statm} (in pages of 4 KiB); NaN where there is no such
     * file (not Linux), and NaN, counted and logged (throttled), when it cannot be read or parsed.
     */
    private double residentBytes() {
        if (!Files.exists(STATM)) {
            return Double.NaN;
        }
        try {
            String[] statm = Files.readString(STATM).trim().split("\\s+");
            return Long.parseLong(statm[1]) * 4096.0;
        }
        catch (IOException | RuntimeException e) {
            residentFailures.increment();
            long now = System.nanoTime();
            long last = residentFailureLoggedNanos.get();
            if (now - last >= TimeUnit.MINUTES.toNanos(1) && residentFailureLoggedNanos.compareAndSet(last, now)) {
                log.warn("could not read the resident memory from " + STATM + " (" + residentFailures.count()
                        + " failed readings so far): " + e);
            }
            return Double.NaN;
        }
    }

    private Counter deliveries(String path) {
        return Counter.builder("waterline.deliveries").tag("path", path)
                .description("message frames written to sockets").register(registry);
    }

    /** One group-commit transaction: how many sends it carried and how long it took. */
    public void batchCommitted(int sends, long nanos) {
        batchSize.record(sends);
        batchCommit.record(nanos, TimeUnit.NANOSECONDS);
    }

    public void accepted(int n) {
        accepted.increment(n);
    }

    public void delivered(boolean fastPath, int n) {
        (fastPath ? fastDeliveries : pollerDeliveries).increment(n);
    }

    public void outboxRows(int n) {
        outboxRows.increment(n);
    }

    public void acked(int n) {
        acks.increment(n);
    }

    public Counter rejected(String reason) {
        return Counter.builder("waterline.sends.rejected").tag("reason", reason)
                .description("sends not accepted").register(registry);
    }

    public Counter withdrawals(String reaper) {
        return Counter.builder("waterline.reaper.withdrawals").tag("reaper", reaper)
                .description("clients withdrawn from live delivery").register(registry);
    }

    /** Failures caught by a background loop (PROTOCOL.md §5: never swallowed silently). */
    public Counter loopErrors(String loop) {
        return Counter.builder("waterline.loop.errors").tag("loop", loop)
                .description("failures caught by a background loop").register(registry);
    }

    /** Items a batched writer could not store and refused alone, its batch's others committed. */
    public Counter poisoned(String writer) {
        return Counter.builder("waterline.batch.poisoned").tag("writer", writer)
                .description("items isolated from their batch and refused (data error)").register(registry);
    }

    public void outbox(long depth, long oldestAgeSeconds) {
        outboxDepth.set(depth);
        outboxOldestAgeSeconds.set(oldestAgeSeconds);
    }

    public void safeDeleteId(long id) {
        safeDeleteId.set(id);
    }

    /** Registers a further counter a capability keeps (beyond PROTOCOL.md's list). */
    public Counter counter(String name, String description) {
        return Counter.builder(name).description(description).register(registry);
    }

    /** Registers a further counter with one tag (its values must be a fixed set: no ids, PROTOCOL.md §5). */
    public Counter counter(String name, String description, String tag, String value) {
        return Counter.builder(name).tag(tag, value).description(description).register(registry);
    }

    /** Registers a further counter with tags given as name, value pairs (fixed sets of values only: no ids). */
    public Counter counter(String name, String description, String... tags) {
        return Counter.builder(name).tags(tags).description(description).register(registry);
    }

    /** Registers a further latency histogram with the buckets every latency here shares. */
    public Timer latencyTimer(String name, String description) {
        return latency(Timer.builder(name).description(description));
    }

    /** Registers a counter whose value its owner keeps (monotonic). */
    public void functionCounter(String name, String description, Supplier<Number> value) {
        FunctionCounter.builder(name, value, v -> v.get().doubleValue())
                .description(description).register(registry);
    }

    /** Registers a gauge whose value its owner computes: connections, queue depths. */
    public void gauge(String name, String description, Supplier<Number> value) {
        Gauge.builder(name, value).description(description).register(registry);
    }

    /** As {@link #gauge(String, String, Supplier)}, with tags given as name, value pairs (fixed sets of values only: no ids). */
    public void gauge(String name, String description, Supplier<Number> value, String... tags) {
        Gauge.builder(name, value).tags(tags).description(description).register(registry);
    }
}
