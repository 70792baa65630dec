package dev.waterline.gateway;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.waterline.session.ClientSession;
import dev.waterline.session.Frames;
import io.github.bucket4j.Bucket;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.web.socket.CloseStatus;
import org.springframework.web.socket.WebSocketSession;

/**
 * One WebSocket connection: its outbound queue and writer, its send credits and its rate limit.
 *
 * <p>Writer: {@link #send} queues the frame; whoever finds the writer idle takes it and writes
 * queued frames in order through the container's asynchronous send ({@link Outlet}), each
 * completion starting the next, until the queue is empty. No thread ever waits for a client's
 * socket: a frame the socket cannot take yet is left to the container's poller, and its
 * completion (on a thread the container starts for it) continues the queue. So no loop of the server (the group commit answering
 * {@code accepted}, the fast path, the poller, receipts) is slowed by a client that stops
 * reading, and no thread is pinned or parked on one. Such a client is withdrawn with 4008 once
 * more than {@code send-buffer-limit} characters wait in its queue, or once one write has been in
 * flight longer than {@code send-time-limit} (the container's send timeout, and the gateway's
 * write watchdog every second, {@link #failIfStuck}). Any other failure of a write (the socket
 * broke, the frame could not be encoded) withdraws it with 1011. Either way {@link WriteFailures}
 * decides, and from the first failure or close on, nothing more is written. A write that fails
 * because the client had already closed is no failure: the container reports the close.
 */
final class Connection implements ClientSession {

    private static final Log log = LogFactory.getLog(Connection.class);

    /** What to do with a connection whose write failed: withdraw it (never an ack) and close it with {@code code}. */
    @FunctionalInterface
    interface WriteFailures {
        void failed(Connection conn, String why, int code, String reason, Throwable cause);
    }

    /** States of the one send in flight: its completion tells the sending thread whether it came at once. */
    private static final int SENDING = 1, DONE_AT_ONCE = 2, PENDING = 3;

    private final Outlet outlet;
    private final String userId;
    private final String sessionId;
    private final long tokenGoodUntilMillis;
    private final WriteFailures writeFailures;
    private final OutboundBudget budget;
    private final long sendBufferChars;
    private final long sendTimeLimitNanos;
    private final Bucket rate;
    private final int maxInflight;
    private final AtomicInteger inflight = new AtomicInteger();
    private final long openedNanos = System.nanoTime();
    private volatile long lastReceivedNanos = openedNanos;

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
    private final AtomicBoolean closeIssued = new AtomicBoolean();
    private volatile long closeIssuedNanos;
    /** Frames wait in the queue until {@code welcome}, which goes first, has been queued. */
    private volatile boolean welcomed;
    private volatile long welcomedNanos;
    /** When the write in flight started ({@link System#nanoTime()}, never 0), or 0 when none is. */
    private volatile long writeStartedNanos;

    Connection(WebSocketSession ws, String userId, long tokenGoodUntilMillis, String sessionId, GatewayProperties limits,
               OutboundBudget budget, WriteFailures writeFailures) {
        this(Outlet.of(ws, limits.sendTimeLimit()), userId, tokenGoodUntilMillis, sessionId, limits, budget, writeFailures);
    }

    Connection(Outlet outlet, String userId, long tokenGoodUntilMillis, String sessionId, GatewayProperties limits,
               OutboundBudget budget, WriteFailures writeFailures) {
        this.outlet = outlet;
        this.budget = budget;
        this.userId = userId;
        this.sessionId = sessionId;
        this.tokenGoodUntilMillis = tokenGoodUntilMillis;
        this.writeFailures = writeFailures;
        this.sendBufferChars = limits.sendBufferLimit().toBytes();
        this.sendTimeLimitNanos = limits.sendTimeLimit().toNanos();
        this.maxInflight = limits.maxInflightSends();
        int perSecond = limits.maxSendsPerSecond();
        this.rate = Bucket.builder()
                .addLimit(limit -> limit.capacity(perSecond).refillGreedy(perSecond, Duration.ofSeconds(1)))
                .build();
    }

    @Override
    public String userId() {
        return userId;
    }

    @Override
    public String sessionId() {
        return sessionId;
    }

    @Override
    public long tokenGoodUntilMillis() {
        return tokenGoodUntilMillis;
    }

    @Override
    public long queuedChars() {
        return queuedChars.get();
    }

    @Override
    public long openedNanos() {
        return openedNanos;
    }

    @Override
    public long lastReceivedNanos() {
        return lastReceivedNanos;
    }

    @Override
    public long welcomedNanos() {
        return welcomedNanos;
    }

    @Override
    public long closeIssuedNanos() {
        return closeIssuedNanos;
    }

    /**
     * A frame the container delivered in parts (its receive buffer is smaller than the largest
     * frame allowed, to keep idle connections small). Touched only by the one thread that
     * delivers this connection's frames.
     */
    private StringBuilder partialText;
    private long partialBytes;
    /** The frame being received was refused as too large: its remaining parts are dropped unread. */
    private boolean discarding;

    /**
     * Adds one part of a frame; returns the whole frame once {@code last}, null while more is to
     * come. Throws {@link FrameTooLarge} once the parts exceed {@code maxBytes} (UTF-8), forgets
     * them and drops the frame's remaining parts: the container goes on handing them over after
     * the 1009 close, and the tail of a refused frame must never be read as a frame of its own.
     */
    String assemble(String part, boolean last, long maxBytes) {
        if (discarding) {
            discarding = !last;
            return null;
        }
        if (last && partialText == null) {
            return part;
        }
        partialBytes += Frames.utf8Length(part);
        if (partialBytes > maxBytes) {
            partialText = null;
            partialBytes = 0;
            discarding = !last;
            throw new FrameTooLarge();
        }
        if (partialText == null) {
            partialText = new StringBuilder(part.length() * 2);
        }
        partialText.append(part);
        if (!last) {
            return null;
        }
        String whole = partialText.toString();
        partialText = null;
        partialBytes = 0;
        return whole;
    }

    /** Counts a binary frame's parts; true once the frame is whole. Throws {@link FrameTooLarge} past {@code maxBytes}. */
    boolean binaryPart(int bytes, boolean last, long maxBytes) {
        if (discarding) {
            discarding = !last;
            return false;
        }
        partialBytes += bytes;
        if (partialBytes > maxBytes) {
            partialBytes = 0;
            discarding = !last;
            throw new FrameTooLarge();
        }
        if (last) {
            partialBytes = 0;
        }
        return last;
    }

    static final class FrameTooLarge extends RuntimeException {
        FrameTooLarge() {
            super("frame too large", null, false, false);
        }
    }

    void received() {
        lastReceivedNanos = System.nanoTime();
    }

    @Override
    public boolean isOpen() {
        return writable.get() && outlet.isOpen();
    }

    /** Queues {@code welcome} ahead of whatever was sent to this connection meanwhile, and starts writing. */
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
     * withdrawn with 4008). Never waits for the socket: at most it starts a write the socket takes
     * at once.
     */
    @Override
    public boolean send(String frame) {
        return queue(frame, frame);
    }

    /**
     * As {@link #send(String)}; {@code written} runs once the frame is written to the socket (on the
     * thread that completes the write: it must be quick), and not at all if it never is.
     */
    @Override
    public boolean send(String frame, Runnable written) {
        return queue(new Timed(frame, written), frame);
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

    private void writeFailed(Throwable failure) {
        if (closeIssued.get() || (failure instanceof IllegalStateException && !outlet.isOpen())) {
            writable.set(false);   // our close, or the client's, came first: that is the close, not a failure
        }
        else if (failure instanceof java.io.EOFException) {
            // the peer went away (it closed, or the connection reset) while the frame was in flight:
            // no failure of ours, but the connection is done; the container reports the close
            close(CloseStatus.GOING_AWAY.getCode(), "connection closed by the peer");
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

    /** Stops all writes at once and hands the connection to {@link WriteFailures}, the first time only. */
    private void fail(String why, int code, String reason, Throwable cause) {
        if (writable.compareAndSet(true, false)) {
            writeFailures.failed(this, why, code, reason, cause);
        }
    }

    /**
     * Closes the connection with {@code code}: writes stop at once and what is queued is dropped,
     * and the close itself runs on a virtual thread of its own, since it may wait for a write in
     * flight (Tomcat gives a close other than 1000 50 ms for that, then drops the close frame and
     * closes the socket: a client that stopped reading may see its connection end without the
     * code). Only the first close counts.
     */
    @Override
    public void close(int code, String reason) {
        writable.set(false);
        drop();
        if (closeIssued.compareAndSet(false, true)) {
            closeIssuedNanos = System.nanoTime() | 1;
            Thread.startVirtualThread(() -> writeClose(code, reason));
        }
    }

    @Override
    public void closeNow(int code, String reason) {
        writable.set(false);
        drop();
        if (closeIssued.compareAndSet(false, true)) {
            closeIssuedNanos = System.nanoTime() | 1;
            writeClose(code, reason);
        }
    }

    /** The container reports the connection closed: nothing more is queued or written. */
    void closed() {
        writable.set(false);
        drop();
    }

    /**
     * Shutdown: lets the writer finish what is queued (every answer ingest gave while draining) up
     * to {@code deadlineNanos}, without waiting for a write already in flight for more than 100 ms
     * (a client that is not reading), then closes with {@code code} on the caller's thread.
     */
    void drainThenClose(int code, String reason, long deadlineNanos) {
        while (writable.get() && (draining.get() || !outbound.isEmpty()) && System.nanoTime() < deadlineNanos) {
            long started = writeStartedNanos;
            if (started != 0 && System.nanoTime() - started > TimeUnit.MILLISECONDS.toNanos(100)) {
                break;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
        writable.set(false);
        drop();
        if (closeIssued.compareAndSet(false, true)) {
            closeIssuedNanos = System.nanoTime() | 1;
            writeClose(code, reason);
        }
    }

    /**
     * A close that fails finds the socket already closed or broken: the container then reports it
     * closed ({@code afterConnectionClosed}), which unregisters it.
     */
    private void writeClose(int code, String reason) {
        try {
            outlet.close(new CloseStatus(code, reason));
        }
        catch (Exception e) {
            log.debug("close(" + code + ") of " + userId + "'s connection found it broken: " + e);
        }
    }

    @Override
    public boolean admitRate() {
        return rate.tryConsume(1);
    }

    @Override
    public boolean admitSend() {
        if (inflight.incrementAndGet() > maxInflight) {
            inflight.decrementAndGet();
            return false;
        }
        if (!rate.tryConsume(1)) {
            inflight.decrementAndGet();
            return false;
        }
        return true;
    }

    @Override
    public void answered() {
        inflight.decrementAndGet();
    }
}
