package dev.waterline.gateway;

import java.util.concurrent.atomic.AtomicBoolean;

import dev.waterline.lifecycle.ThrottledLog;
import dev.waterline.session.ClientSession;
import io.micrometer.core.instrument.Counter;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.web.socket.CloseStatus;
import org.springframework.web.socket.WebSocketSession;

/**
 * One WebSocket connection: who it is, and its close. Its parts do the rest: the outbound queue
 * and the asynchronous writer ({@link OutboundWriter}: no thread ever waits on a client's socket;
 * a client that does not read is withdrawn with 4008, a failed write with 1011), its send credits
 * and rate limit ({@link SendCredits}), and frames that arrive in parts ({@link FrameAssembler}).
 */
final class Connection implements ClientSession {

    private static final Log log = LogFactory.getLog(Connection.class);
    /** Closes that find their socket broken, all connections together: one line a second at most. */
    private static final ThrottledLog closeFailureLog = new ThrottledLog();

    /** What to do with a connection whose write failed: withdraw it (never an ack) and close it with {@code code}. */
    @FunctionalInterface
    interface WriteFailures {
        void failed(Connection conn, String why, int code, String reason, Throwable cause);
    }

    private final Outlet outlet;
    private final String userId;
    private final String sessionId;
    private final long tokenGoodUntilMillis;
    private final OutboundWriter writer;
    private final SendCredits credits;
    private final FrameAssembler assembler = new FrameAssembler();
    private final Counter closeFailures;
    private final long openedNanos = System.nanoTime();
    private volatile long lastReceivedNanos = openedNanos;
    private final AtomicBoolean closeIssued = new AtomicBoolean();
    private volatile long closeIssuedNanos;

    Connection(WebSocketSession ws, String userId, long tokenGoodUntilMillis, String sessionId, GatewayProperties limits,
               OutboundBudget budget, WriteFailures writeFailures, Counter closeFailures) {
        this(Outlet.of(ws, limits.sendTimeLimit()), userId, tokenGoodUntilMillis, sessionId, limits, budget, writeFailures,
                closeFailures);
    }

    Connection(Outlet outlet, String userId, long tokenGoodUntilMillis, String sessionId, GatewayProperties limits,
               OutboundBudget budget, WriteFailures writeFailures, Counter closeFailures) {
        this.outlet = outlet;
        this.userId = userId;
        this.sessionId = sessionId;
        this.tokenGoodUntilMillis = tokenGoodUntilMillis;
        this.closeFailures = closeFailures;
        this.writer = new OutboundWriter(this, outlet, limits, budget, writeFailures);
        this.credits = new SendCredits(limits.maxInflightSends(), limits.maxSendsPerSecond());
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
        return writer.queuedChars();
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
        return writer.welcomedNanos();
    }

    @Override
    public long closeIssuedNanos() {
        return closeIssuedNanos;
    }

    /** One part of a text frame ({@link FrameAssembler#text}): the whole frame once {@code last}, else null. */
    String assemble(String part, boolean last, long maxBytes) {
        return assembler.text(part, last, maxBytes);
    }

    /** One part of a binary frame ({@link FrameAssembler#binary}): true once the frame is whole. */
    boolean binaryPart(int bytes, boolean last, long maxBytes) {
        return assembler.binary(bytes, last, maxBytes);
    }

    void received() {
        lastReceivedNanos = System.nanoTime();
    }

    @Override
    public boolean isOpen() {
        return writer.writable() && outlet.isOpen();
    }

    /** Queues {@code welcome} ahead of whatever was sent to this connection meanwhile, and starts writing. */
    void welcome(String frame) {
        writer.welcome(frame);
    }

    /** See {@link OutboundWriter#send}: never waits for the socket. */
    @Override
    public boolean send(String frame) {
        return writer.send(frame, null);
    }

    /**
     * As {@link #send(String)}; {@code written} runs once the frame is written to the socket (on the
     * thread that completes the write: it must be quick), and not at all if it never is.
     */
    @Override
    public boolean send(String frame, Runnable written) {
        return writer.send(frame, written);
    }

    /** Withdraws the connection (4008) if one write has been in flight longer than {@code send-time-limit}. */
    void failIfStuck(long nowNanos) {
        writer.failIfStuck(nowNanos);
    }

    /** Whether a close was issued (a write failing after it is the close, no failure). */
    boolean closeIssued() {
        return closeIssued.get();
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
        writer.stop();
        if (closeIssued.compareAndSet(false, true)) {
            closeIssuedNanos = System.nanoTime() | 1;
            Thread.startVirtualThread(() -> writeClose(code, reason));
        }
    }

    @Override
    public void closeNow(int code, String reason) {
        writer.stop();
        if (closeIssued.compareAndSet(false, true)) {
            closeIssuedNanos = System.nanoTime() | 1;
            writeClose(code, reason);
        }
    }

    /** The container reports the connection closed: nothing more is queued or written. */
    void closed() {
        writer.stop();
    }

    /**
     * Shutdown: lets the writer finish what is queued (every answer ingest gave while draining) up
     * to {@code deadlineNanos}, without waiting for a write already in flight for more than 100 ms
     * (a client that is not reading), then closes with {@code code} on the caller's thread.
     */
    void drainThenClose(int code, String reason, long deadlineNanos) {
        writer.drainUntil(deadlineNanos);
        if (closeIssued.compareAndSet(false, true)) {
            closeIssuedNanos = System.nanoTime() | 1;
            writeClose(code, reason);
        }
    }

    /**
     * A close that fails finds the socket already closed or broken: the container then reports it
     * closed ({@code afterConnectionClosed}), which unregisters it. Counted
     * ({@code waterline.gateway.close.failures}) and logged, throttled.
     */
    private void writeClose(int code, String reason) {
        try {
            outlet.close(new CloseStatus(code, reason));
        }
        catch (Exception e) {
            closeFailures.increment();
            long unlogged = closeFailureLog.admit();
            if (unlogged >= 0) {
                log.info("close(" + code + ") of " + userId + "'s connection found it broken: " + e
                        + ThrottledLog.more(unlogged));
            }
        }
    }

    @Override
    public boolean admitRate() {
        return credits.admitRate();
    }

    @Override
    public boolean admitSend() {
        return credits.admitSend();
    }

    @Override
    public void answered() {
        credits.answered();
    }
}
