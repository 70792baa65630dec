package dev.waterline.gateway;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.springframework.web.socket.CloseStatus;

/**
 * One connection's outbound queue and writer, within its share of the {@link OutboundBudget}.
 *
 * <p>{@link #send} queues the frame; whoever finds the writer idle takes it and writes queued
 * frames in order through the container's asynchronous send ({@link Outlet}), each completion
 * starting the next, until the queue is empty. No thread ever waits for a client's socket: a
 * frame the socket cannot take yet is left to the container's poller, and its completion (on a
 * thread the container starts for it) continues the queue. So no loop of the server (the group
 * commit answering {@code accepted}, the fast path, the poller, receipts) is slowed by a client
 * that stops reading, and no thread is pinned or parked on one. Such a client is withdrawn with
 * 4008 once more than {@code send-buffer-limit} characters wait in its queue, or once one write
 * has been in flight longer than {@code send-time-limit} (the container's send timeout, and the
 * gateway's write watchdog every second, {@link #failIfStuck}). Any other failure of a write (the
 * socket broke, the frame could not be encoded) withdraws it with 1011 ({@link #writeFailed}).
 * Either way {@link Connection.WriteFailures} decides, and from the first failure or close on,
 * nothing more is written. A write that fails because the client had already closed is no
 * failure: the container reports the close.
 */
final class OutboundWriter {

    /** States of the one send in flight: its completion tells the sending thread whether it came at once. */
    private static final int SENDING = 1, DONE_AT_ONCE = 2, PENDING = 3;

    private final Connection conn;
    private final Outlet outlet;
    private final OutboundBudget budget;
    private final Connection.WriteFailures writeFailures;
    private final long sendBufferChars;
    private final long sendTimeLimitNanos;

    /** Queued frames: a {@link String}, or a {@link Timed} frame whose writing is to be reported. */
    private final ConcurrentLinkedDeque<Object> outbound = new ConcurrentLinkedDeque<>();
    /** What to run once the write in flight completes successfully (a {@link Timed} frame's report), or null. */
    private volatile Runnable inFlightWritten;
    private final AtomicLong queuedChars = new AtomicLong();
    /** Held by whoever is writing this connection's frames (from taking one until the queue is empty). */
    private final AtomicBoolean draining = new AtomicBoolean();
    private final AtomicInteger sendState = new AtomicInteger();
    /** False from the first failed write or close on: nothing more is queued or written. */
    private final AtomicBoolean writable = new AtomicBoolean(true);
    /** Frames wait in the queue until {@code welcome}, which goes first, has been queued. */
    private volatile boolean welcomed;
    private volatile long welcomedNanos;
    /** When the write in flight started ({@link System#nanoTime()}, never 0), or 0 when none is. */
    private volatile long writeStartedNanos;

    OutboundWriter(Connection conn, Outlet outlet, GatewayProperties limits, OutboundBudget budget,
                   Connection.WriteFailures writeFailures) {
        this.conn = conn;
        this.outlet = outlet;
        this.budget = budget;
        this.writeFailures = writeFailures;
        this.sendBufferChars = limits.sendBufferLimit().toBytes();
        this.sendTimeLimitNanos = limits.sendTimeLimit().toNanos();
    }

    long queuedChars() {
        return queuedChars.get();
    }

    long welcomedNanos() {
        return welcomedNanos;
    }

    boolean writable() {
        return writable.get();
    }

    /** Queues {@code welcome} ahead of whatever was sent meanwhile, and starts writing. */
    void welcome(String frame) {
        // the first frame, and small: queued whatever the budget says (a connection is only ever
        // withdrawn for the budget past its floor)
        queuedChars.addAndGet(frame.length());
        budget.take(frame.length(), 0);
        outbound.offerFirst(frame);
        welcomedNanos = System.nanoTime() | 1;
        welcomed = true;
        schedule();
    }

    /**
     * Queues one frame; false when the connection no longer takes frames (closed, withdrawn, or
     * this frame would put more than {@code send-buffer-limit} characters in its queue: then it is
     * withdrawn with 4008). {@code written}, if not null, runs once the frame is written to the
     * socket (on the thread that completes the write: it must be quick), and not at all if it
     * never is.
     */
    boolean send(String frame, Runnable written) {
        return queue(written == null ? frame : new Timed(frame, written), frame);
    }

    /** A frame whose writing is reported (latency histograms measure up to the socket, not the queue). */
    private record Timed(String text, Runnable written) {
    }

    private boolean queue(Object entry, String frame) {
        if (!writable.get()) {
            return false;
        }
        long waiting = queuedChars.addAndGet(frame.length());
        if (waiting > sendBufferChars) {
            queuedChars.addAndGet(-frame.length());
            fail("send_buffer", 4008, "withdrawn: not reading (more than " + sendBufferChars + " characters waiting)",
                    new IOException("send buffer limit of " + sendBufferChars + " characters exceeded"));
            return false;
        }
        if (!budget.take(frame.length(), waiting - frame.length())) {
            queuedChars.addAndGet(-frame.length());
            fail("outbound_budget", 4008, "withdrawn: not reading (" + waiting + " characters waiting while the server's"
                    + " outbound budget is spent)", new IOException("outbound heap budget of " + budget.limit() + " characters spent"));
            return false;
        }
        outbound.offerLast(entry);
        if (welcomed) {
            schedule();
        }
        if (!writable.get()) {
            // closed between the check above and the offer: nothing will write it, so it is dropped here
            drop();
            return false;
        }
        return true;
    }

    /** Writes stop at once and what is queued is dropped (a close, or the container reporting the connection closed). */
    void stop() {
        writable.set(false);
        drop();
    }

    /** Empties the queue of a connection that writes no more, giving back what its frames held of the budget. */
    private void drop() {
        Object entry;
        while ((entry = outbound.pollFirst()) != null) {
            int chars = (entry instanceof Timed t ? t.text() : (String) entry).length();
            queuedChars.addAndGet(-chars);
            budget.release(chars);
        }
    }

    private void schedule() {
        if (draining.compareAndSet(false, true)) {
            pump();
        }
    }

    /**
     * Writes queued frames, holding {@code draining}, until the queue is empty (then lets go, and
     * looks once more: a frame queued meanwhile found the flag still held) or a send goes
     * asynchronous (its completion, {@link #sent}, continues here on its own thread). A send that
     * completes at once is followed in this loop, not by recursion.
     */
    private void pump() {
        while (true) {
            Object entry = outbound.pollFirst();
            if (entry == null) {
                draining.set(false);
                if (outbound.isEmpty() || !draining.compareAndSet(false, true)) {
                    return;
                }
                continue;
            }
            String frame = entry instanceof Timed t ? t.text() : (String) entry;
            queuedChars.addAndGet(-frame.length());
            budget.release(frame.length());
            if (!writable.get()) {
                drop();
                return;   // the flag stays held: nothing is ever written again
            }
            inFlightWritten = entry instanceof Timed t ? t.written() : null;
            writeStartedNanos = System.nanoTime() | 1;
            sendState.set(SENDING);
            try {
                outlet.send(frame, this::sent);
            }
            catch (RuntimeException notStarted) {
                writeStartedNanos = 0;
                inFlightWritten = null;
                writeFailed(notStarted);
                return;
            }
            if (sendState.compareAndSet(SENDING, PENDING)) {
                return;   // not done yet: its completion carries on
            }
            if (!writable.get()) {
                return;
            }
        }
    }

    /** A send's completion. */
    private void sent(Throwable failure) {
        writeStartedNanos = 0;
        Runnable written = inFlightWritten;
        inFlightWritten = null;
        if (failure != null) {
            writeFailed(failure);
        }
        else if (written != null) {
            written.run();
        }
        if (sendState.compareAndSet(SENDING, DONE_AT_ONCE)) {
            return;   // the sending thread's loop goes on
        }
        pump();
    }

    /**
     * A write failed, or could not start: a close that came first (ours, or the client's) is the
     * close and no failure; a peer gone mid-frame closes the connection (1001); a write past the
     * send time withdraws it with 4008; anything else with 1011.
     */
    void writeFailed(Throwable failure) {
        if (conn.closeIssued() || (failure instanceof IllegalStateException && !outlet.isOpen())) {
            writable.set(false);   // our close, or the client's, came first: that is the close, not a failure
        }
        else if (failure instanceof java.io.EOFException) {
            // the peer went away (it closed, or the connection reset) while the frame was in flight:
            // no failure of ours, but the connection is done; the container reports the close
            conn.close(CloseStatus.GOING_AWAY.getCode(), "connection closed by the peer");
        }
        else if (failure instanceof java.net.SocketTimeoutException) {
            fail("send_time", 4008, "withdrawn: not reading (one write in flight for more than "
                    + Duration.ofNanos(sendTimeLimitNanos).toSeconds() + " s)", failure);
        }
        else {
            fail("write_failed", CloseStatus.SERVER_ERROR.getCode(), "the server could not write to this connection", failure);
        }
    }

    /** Withdraws the connection (4008) if one write has been in flight longer than {@code send-time-limit}. */
    void failIfStuck(long nowNanos) {
        long started = writeStartedNanos;
        if (started != 0 && nowNanos - started > sendTimeLimitNanos) {
            fail("send_time", 4008, "withdrawn: not reading (one write in flight for more than "
                    + Duration.ofNanos(sendTimeLimitNanos).toSeconds() + " s)", new IOException("send time limit exceeded"));
        }
    }

    /** Stops all writes at once and hands the connection to {@link Connection.WriteFailures}, the first time only. */
    private void fail(String why, int code, String reason, Throwable cause) {
        if (writable.compareAndSet(true, false)) {
            writeFailures.failed(conn, why, code, reason, cause);
        }
    }

    /**
     * Shutdown: lets the writer finish what is queued up to {@code deadlineNanos}, without waiting
     * for a write already in flight for more than 100 ms (a client that is not reading); then
     * writes stop and what is left is dropped.
     */
    void drainUntil(long deadlineNanos) {
        while (writable.get() && (draining.get() || !outbound.isEmpty()) && System.nanoTime() < deadlineNanos) {
            long started = writeStartedNanos;
            if (started != 0 && System.nanoTime() - started > TimeUnit.MILLISECONDS.toNanos(100)) {
                break;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
        stop();
    }
}
