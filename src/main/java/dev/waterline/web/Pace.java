package dev.waterline.web;

import java.io.IOException;

/**
 * The slowest a transfer of a request or answer body may go: once its grace has passed, every
 * window of that length must have moved at least {@code minPerSecond} × the window's bytes. A
 * window, not the average since the start: a client that sends or reads half a file fast and then
 * a byte at a time cannot bank the first half's speed. One per transfer; not thread-safe (one
 * thread reads or writes a body).
 */
public final class Pace {

    /** A transfer slower than its pace: the server gives its turn back. */
    public static final class TooSlow extends IOException {
        TooSlow(long bytes, long seconds) {
            super("the transfer went too slowly (" + bytes + " bytes in the last " + seconds + " s)", null);
        }
    }

    private final long windowNanos;
    private final long minPerSecond;
    private long windowStart = System.nanoTime();
    private long windowBytes;

    public Pace(long windowNanos, long minPerSecond) {
        this.windowNanos = windowNanos;
        this.minPerSecond = minPerSecond;
    }

    /** {@code bytes} more have moved; throws {@link TooSlow} when a whole window moved too few. */
    public void moved(long bytes) throws TooSlow {
        windowBytes += bytes;
        long now = System.nanoTime();
        long elapsed = now - windowStart;
        if (elapsed >= windowNanos) {
            if (windowBytes < (double) minPerSecond * elapsed / 1e9) {
                throw new TooSlow(windowBytes, elapsed / 1_000_000_000L);
            }
            windowStart = now;
            windowBytes = 0;
        }
    }
}
