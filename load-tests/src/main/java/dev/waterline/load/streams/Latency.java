package dev.waterline.load.streams;

import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/** A streams run's append→reader latency, µs: every chunk, and those due from {@link #steadyFrom}. */
final class Latency {
    final Histogram steady = new ConcurrentHistogram(3_600_000_000L, 3);
    volatile long steadyFrom;

    void record(long dueNanos) {
        if (dueNanos >= steadyFrom) {
            long micros = Math.max(1, (System.nanoTime() - dueNanos) / 1000);
            steady.recordValue(Math.min(micros, steady.getHighestTrackableValue()));
        }
    }

    String steadyRow() {
        return ms(steady.getValueAtPercentile(50)) + " | " + ms(steady.getValueAtPercentile(99)) + " | "
                + ms(steady.getValueAtPercentile(99.9)) + " | " + ms(steady.getMaxValue());
    }

    static String ms(long micros) {
        return String.format("%.1f ms", micros / 1000.0);
    }
}
