package dev.waterline.lifecycle;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import dev.waterline.metrics.WaterlineMetrics;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.stereotype.Component;

/**
 * Runs every background loop of the server (group commit, receipts, fast path, poller, acks,
 * reclaim, reapers, the scheduled passes), so that all of them treat failure alike.
 *
 * <p>Loop: call the loop's step while its running condition holds. An exception thrown by a step
 * is logged and counted in {@code waterline_loop_errors_total{loop}} (never swallowed), and the
 * loop pauses before its next step, from 50 ms doubling to 2 s while steps keep failing (a loop
 * whose database is down must not spin), back to none after a step that succeeds. An
 * {@link Error} goes to {@link FatalErrors}: the process exits rather than lose a loop
 * silently. An interrupt ends the loop. Stopping is the owner's: it lowers its running
 * condition and wakes the thread ({@link Workers#stop}).
 */
@Component
public class Loops {

    private static final Log log = LogFactory.getLog(Loops.class);
    private static final long FIRST_PAUSE = TimeUnit.MILLISECONDS.toNanos(50);
    private static final long LONGEST_PAUSE = TimeUnit.SECONDS.toNanos(2);

    /** One step of a loop: takes or waits for work, does it, returns. */
    @FunctionalInterface
    public interface Step {
        void run() throws InterruptedException;
    }

    private final WaterlineMetrics metrics;
    private final FatalErrors fatal;
    private final java.util.concurrent.ConcurrentHashMap<String, ThrottledLog> throttles = new java.util.concurrent.ConcurrentHashMap<>();

    public Loops(WaterlineMetrics metrics, FatalErrors fatal) {
        this.metrics = metrics;
        this.fatal = fatal;
    }

    /** Starts {@code step} on a new virtual thread, repeated while {@code running} holds. */
    public Thread start(String loop, String threadName, BooleanSupplier running, Step step) {
        metrics.loopErrors(loop);
        return Thread.ofVirtual().name(threadName).start(() -> run(loop, running, step));
    }

    /** As {@link #start}, on a platform daemon thread (for a loop that must never wait for a carrier). */
    public Thread startPlatform(String loop, String threadName, BooleanSupplier running, Step step) {
        metrics.loopErrors(loop);
        return Thread.ofPlatform().daemon().name(threadName).start(() -> run(loop, running, step));
    }

    void run(String loop, BooleanSupplier running, Step step) {
        long pause = 0;
        while (running.getAsBoolean()) {
            try {
                step.run();
                pause = 0;
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            catch (Exception e) {
                failed(loop, e);
                pause = pause == 0 ? FIRST_PAUSE : Math.min(LONGEST_PAUSE, pause * 2);
                LockSupport.parkNanos(pause);
            }
            catch (Error e) {
                fatal.died("loop " + loop, e);
                return;
            }
        }
    }

    /**
     * Registers the error counter of a loop that runs by {@link #pass} (a scheduler drives it), so
     * that it shows 0 from start: Prometheus's {@code increase()} does not count a series' first
     * sample, so a counter born at its first failure would hide that failure from an alert.
     */
    public void declare(String loop) {
        metrics.loopErrors(loop);
    }

    /**
     * One pass of a loop driven by a scheduler ({@code @Scheduled}): what it throws is logged and
     * counted like a step's, and an {@link Error} ends the process.
     */
    public void pass(String loop, Runnable pass) {
        try {
            pass.run();
        }
        catch (RuntimeException e) {
            failed(loop, e);
        }
        catch (Error e) {
            fatal.died("loop " + loop, e);
        }
    }

    /**
     * A failure a loop caught and dealt with itself (it goes on): counted every time, and logged
     * at most once a second per loop (with how many went unlogged since), so that an outage met
     * by thousands of batches a second cannot flood the log.
     */
    public void failed(String loop, Throwable e) {
        failed(loop, null, e);
    }

    /** As {@link #failed(String, Throwable)}, with what was being done, for the log line. */
    public void failed(String loop, String what, Throwable e) {
        metrics.loopErrors(loop).increment();
        boolean outage = Failures.infrastructure(e);
        // outages and other failures are throttled apart, so an outage's lines never hide a bug's
        long unlogged = throttles.computeIfAbsent(loop + (outage ? "/outage" : "/failure"), k -> new ThrottledLog()).admit();
        if (unlogged < 0) {
            return;
        }
        String line = "loop " + loop + (what == null ? "" : ": " + what) + ThrottledLog.more(unlogged);
        if (outage) {
            log.warn(line + ": " + Failures.describe(e));
        }
        else {
            log.error(line, e);
        }
    }
}
