package dev.waterline.lifecycle;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/** Stopping a loop's threads once its running flag is down. */
public final class Workers {

    private Workers() {
    }

    /**
     * Wakes each thread (a parked loop sees its flag at once; a thread waiting on a queue treats
     * the wake-up as a spurious one and looks again) and waits up to {@code each} for it to end.
     * An interrupt of the caller is kept and ends the wait.
     */
    public static void stop(Collection<Thread> threads, Duration each) {
        for (Thread t : threads) {
            LockSupport.unpark(t);
        }
        for (Thread t : threads) {
            try {
                t.join(each);
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Waits for {@code threads} to end, all of them together no later than {@code deadlineNanos} ({@link System#nanoTime()}). */
    public static void joinUntil(Collection<Thread> threads, long deadlineNanos) {
        for (Thread t : threads) {
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                return;
            }
            try {
                t.join(Duration.ofNanos(left));
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    public static void stop(Thread thread, Duration each) {
        if (thread != null) {
            stop(List.of(thread), each);
        }
    }
}
