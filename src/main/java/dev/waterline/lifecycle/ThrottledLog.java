package dev.waterline.lifecycle;

import java.util.concurrent.TimeUnit;

/**
 * At most one log line a second for one kind of event, with how many were held back since: for
 * failures that an outage or a storm can repeat thousands of times a second (every one is still
 * counted by its caller).
 */
public final class ThrottledLog {

    private static final long INTERVAL = TimeUnit.SECONDS.toNanos(1);

    private long lastNanos = System.nanoTime() - 2 * INTERVAL;
    private long held;

    /** -1 to hold this one back, else how many were held back before it. */
    public synchronized long admit() {
        long now = System.nanoTime();
        if (now - lastNanos < INTERVAL) {
            held++;
            return -1;
        }
        lastNanos = now;
        long h = held;
        held = 0;
        return h;
    }

    /** " (and n more since the last one logged)" for {@code held} > 0, else "". */
    public static String more(long held) {
        return held <= 0 ? "" : " (and " + held + " more since the last one logged)";
    }
}
