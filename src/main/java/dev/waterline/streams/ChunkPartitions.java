package dev.waterline.streams;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.waterline.history.RetentionProperties;
import dev.waterline.lifecycle.Loops;
import dev.waterline.lifecycle.Workers;
import dev.waterline.metrics.WaterlineMetrics;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * The time partitions of {@code stream_chunks} (V6), and stream retention.
 *
 * <p>Loop (one of {@link Loops}, every {@code maintenance-interval}, and at once when an append
 * finds no partition for its time, {@link #wake}; the first pass runs at start, before the
 * appender takes requests): by the database's clock, create the current partition and
 * {@code partitions-ahead} more, drop every partition whose range ended more than
 * {@code waterline.retention.history} ago (a drop: no delete, no dead tuples, no vacuum), and
 * delete the closed streams older than that (their blobs go with them). Each create or drop is a
 * transaction of its own under one advisory lock, so nodes doing the same at once wait for each
 * other instead of failing; a partition whose range an existing one already covers (the width was
 * changed) is left to that one. Partitions are named by their start in UTC,
 * {@code stream_chunks_pYYYYMMDD} (a day) or {@code stream_chunks_pYYYYMMDDHH} (an hour). The
 * statements are {@link ChunkPartitionRepository}'s.
 */
@Component
class ChunkPartitions implements SmartLifecycle {

    private static final Log log = LogFactory.getLog(ChunkPartitions.class);
    static final String LOOP = "stream_partitions";
    private static final Pattern NAME = Pattern.compile("stream_chunks_p(\\d{8}|\\d{10})");
    private static final DateTimeFormatter DAY = DateTimeFormatter.ofPattern("yyyyMMdd").withZone(ZoneOffset.UTC);
    private static final DateTimeFormatter HOUR = DateTimeFormatter.ofPattern("yyyyMMddHH").withZone(ZoneOffset.UTC);

    private final StreamProperties properties;
    private final RetentionProperties retention;
    private final ChunkPartitionRepository store;
    private final Loops loops;
    private volatile boolean running;
    private volatile boolean wanted;
    private Thread thread;

    ChunkPartitions(StreamProperties properties, RetentionProperties retention, ChunkPartitionRepository store, Loops loops,
                    WaterlineMetrics metrics) {
        this.properties = properties;
        this.retention = retention;
        this.store = store;
        this.loops = loops;
        metrics.gauge("waterline.stream.partitions", "partitions of the stream chunk table", this::countQuietly);
    }

    private volatile int count = -1;

    private int countQuietly() {
        return count;
    }

    /** Asks for a pass now (an append found no partition). */
    void wake() {
        wanted = true;
        Thread t = thread;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    /** One pass by the database's clock. */
    void maintain() {
        maintain(store.now(), retention.history());
    }

    /** What the partitions are after a pass at {@code now}: created, dropped, and how many there are. */
    record Pass(List<String> created, List<String> dropped, int partitions) {
    }

    /** One pass as if it were {@code now}, keeping {@code keep} of chunks. */
    Pass maintain(Instant now, Duration keep) {
        Duration width = properties.partitionWidth();
        Instant start = now.truncatedTo(hourly(width) ? ChronoUnit.HOURS : ChronoUnit.DAYS);
        List<String> existing = new ArrayList<>(store.partitions());
        List<String> created = new ArrayList<>();
        for (int k = 0; k <= properties.partitionsAhead(); k++) {
            Instant from = start.plus(width.multipliedBy(k));
            Instant to = from.plus(width);
            if (overlaps(existing, from, to)) {
                // the width was changed: what the old partitions leave of this range is filled
                // hour by hour, so that no hour is without a partition and none overlaps
                for (Instant h = from; h.isBefore(to); h = h.plus(Duration.ofHours(1))) {
                    if (!overlaps(existing, h, h.plus(Duration.ofHours(1)))) {
                        create(name(h, Duration.ofHours(1)), h, h.plus(Duration.ofHours(1)), created, existing);
                    }
                }
                continue;
            }
            create(name(from, width), from, to, created, existing);
        }
        Instant cutoff = now.minus(keep);
        List<String> dropped = new ArrayList<>();
        for (String name : store.partitions()) {
            Instant end = end(name);
            if (end != null && !end.isAfter(cutoff)) {
                store.drop(name);
                dropped.add(name);
            }
        }
        while (store.deleteOldStreams(cutoff, 1000) == 1000) {
            // the next chunk
        }
        int n = store.partitions().size();
        count = n;
        if (!created.isEmpty() || !dropped.isEmpty()) {
            log.info("stream chunk partitions: created " + created + ", dropped " + dropped + " (past " + keep + ")");
        }
        return new Pass(created, dropped, n);
    }

    private static boolean hourly(Duration width) {
        return width.equals(Duration.ofHours(1));
    }

    /** The name of the partition of {@code width} (a day or an hour) that holds the instant {@code at}. */
    static String name(Instant at, Duration width) {
        return "stream_chunks_p" + (hourly(width) ? HOUR : DAY).format(at);
    }

    /** Whether a partition named in {@code existing} holds any instant of [from, to). */
    private static boolean overlaps(List<String> existing, Instant from, Instant to) {
        for (String name : existing) {
            Instant s = start(name);
            Instant e = end(name);
            if (s != null && s.isBefore(to) && from.isBefore(e)) {
                return true;
            }
        }
        return false;
    }

    /** Creates one partition (a transaction of its own under the advisory lock); a failure is logged and counted, and the pass goes on. */
    private void create(String name, Instant from, Instant to, List<String> created, List<String> existing) {
        try {
            boolean made = store.create(name, from, to);
            existing.add(name);
            if (made) {
                created.add(name);
            }
        }
        catch (RuntimeException e) {
            loops.failed(LOOP, "creating partition " + name, e);
        }
    }

    static Instant start(String name) {
        Matcher m = NAME.matcher(name);
        if (!m.matches()) {
            return null;
        }
        String t = m.group(1);
        int hour = t.length() == 10 ? Integer.parseInt(t.substring(8, 10)) : 0;
        return java.time.LocalDateTime.of(Integer.parseInt(t.substring(0, 4)), Integer.parseInt(t.substring(4, 6)),
                Integer.parseInt(t.substring(6, 8)), hour, 0).toInstant(ZoneOffset.UTC);
    }

    static Instant end(String name) {
        Instant s = start(name);
        if (s == null) {
            return null;
        }
        return s.plus(name.length() == "stream_chunks_p".length() + 8 ? Duration.ofDays(1) : Duration.ofHours(1));
    }

    @Override
    public void start() {
        running = true;
        loops.pass(LOOP, this::maintain);
        thread = loops.start(LOOP, "stream-partitions", () -> running, () -> {
            if (!wanted) {
                LockSupport.parkNanos(properties.maintenanceInterval().toNanos());
            }
            wanted = false;
            if (running) {
                maintain();
            }
        });
    }

    @Override
    public void stop() {
        running = false;
        Workers.stop(thread, Duration.ofSeconds(2));
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Starts before the appender (whose first append needs a partition). */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 10;
    }
}
