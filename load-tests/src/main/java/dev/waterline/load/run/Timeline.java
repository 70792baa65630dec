package dev.waterline.load.run;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;

import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * Send→delivered latency and the generator's own write lag, per second of the load (by the
 * second the send was offered in), so that a tail can be placed in time and set beside the
 * server's GC log or the database's: {@code timeline.csv} in the run's folder, wall-clock
 * seconds in its first column.
 */
public final class Timeline {

    /** Latencies are tracked up to 10 minutes; longer ones count as 10 minutes. */
    private static final long MAX_MICROS = 600_000_000L;

    private final long startNanos;
    private final long startEpochMillis;
    private final AtomicReferenceArray<Histogram> delivered;
    private final AtomicReferenceArray<Histogram> writeLag;

    public Timeline(long startNanos, int seconds) {
        this.startNanos = startNanos;
        this.startEpochMillis = System.currentTimeMillis() - (System.nanoTime() - startNanos) / 1_000_000;
        this.delivered = new AtomicReferenceArray<>(seconds + 1);
        this.writeLag = new AtomicReferenceArray<>(seconds + 1);
    }

    void delivered(long sentNanos) {
        record(delivered, sentNanos);
    }

    void written(long offeredNanos) {
        record(writeLag, offeredNanos);
    }

    private void record(AtomicReferenceArray<Histogram> buckets, long fromNanos) {
        if (fromNanos < startNanos) {
            return;
        }
        int second = (int) ((fromNanos - startNanos) / 1_000_000_000L);
        if (second >= buckets.length()) {
            return;
        }
        Histogram h = buckets.get(second);
        if (h == null) {
            buckets.compareAndSet(second, null, new ConcurrentHistogram(MAX_MICROS, 2));
            h = buckets.get(second);
        }
        Stats.record(h, fromNanos);
    }

    record Second(int second, Instant at, long deliveries, double p50Ms, double p99Ms, double maxMs,
                  double writeLagP99Ms, double writeLagMaxMs) {
    }

    List<Second> seconds() {
        List<Second> out = new ArrayList<>();
        for (int i = 0; i < delivered.length(); i++) {
            Histogram d = delivered.get(i);
            Histogram w = writeLag.get(i);
            if (d == null && w == null) {
                continue;
            }
            out.add(new Second(i, Instant.ofEpochMilli(startEpochMillis + i * 1000L),
                    d == null ? 0 : d.getTotalCount(), ms(d, 50), ms(d, 99), d == null ? 0 : d.getMaxValue() / 1000.0,
                    ms(w, 99), w == null ? 0 : w.getMaxValue() / 1000.0));
        }
        return out;
    }

    /** The {@code n} seconds with the worst send→delivered p99, worst first. */
    List<Second> worst(int n) {
        return seconds().stream().filter(s -> s.deliveries() > 0)
                .sorted(Comparator.comparingDouble(Second::p99Ms).reversed()).limit(n).toList();
    }

    public void write(Path dir) throws IOException {
        StringBuilder b = new StringBuilder("at,second,deliveries,delivered_p50_ms,delivered_p99_ms,delivered_max_ms,"
                + "write_lag_p99_ms,write_lag_max_ms\n");
        for (Second s : seconds()) {
            b.append(s.at()).append(',').append(s.second()).append(',').append(s.deliveries()).append(',')
                    .append(s.p50Ms()).append(',').append(s.p99Ms()).append(',').append(s.maxMs()).append(',')
                    .append(s.writeLagP99Ms()).append(',').append(s.writeLagMaxMs()).append('\n');
        }
        Files.writeString(dir.resolve("timeline.csv"), b);
    }

    private static double ms(Histogram h, double percentile) {
        return h == null ? 0 : h.getValueAtPercentile(percentile) / 1000.0;
    }
}
