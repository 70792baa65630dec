package dev.waterline.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import dev.waterline.session.ClientSession;
import dev.waterline.session.Frames;
import io.github.bucket4j.Bucket;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.web.socket.CloseStatus;
import org.springframework.web.socket.TextMessage;
import org.springframework.web.socket.WebSocketSession;
import org.springframework.web.socket.handler.ConcurrentWebSocketSessionDecorator;
import org.springframework.web.socket.handler.SessionLimitExceededException;

/**
 * One WebSocket connection: its writer, its send credits and its rate limit.
 *
 * <p>A write that fails is never ignored: a client that does not read (its send buffer or time
 * limit spent) is withdrawn with 4008, and any other failure of a write (the socket broke, the
 * frame could not be encoded) withdraws it with 1011, so it reconnects and resyncs instead of
 * sitting on an open socket that receives nothing. Either way {@link WriteFailures} decides, on
 * the thread that wrote, and the failure is logged and counted there.
 */
final class Connection implements ClientSession {

    private static final Log log = LogFactory.getLog(Connection.class);

    /** What to do with a connection whose write failed: withdraw it (never an ack) and close it with {@code code}. */
    @FunctionalInterface
    interface WriteFailures {
        void failed(Connection conn, int code, String reason, Exception cause);
    }

    private final ConcurrentWebSocketSessionDecorator out;
    private final String userId;
    private final String sessionId;
    private final long tokenGoodUntilMillis;
    private final WriteFailures writeFailures;
    private final Bucket rate;
    private final int maxInflight;
    private final AtomicInteger inflight = new AtomicInteger();
    private final long openedNanos = System.nanoTime();
    private volatile long lastReceivedNanos = openedNanos;

    Connection(WebSocketSession ws, String userId, long tokenGoodUntilMillis, String sessionId, GatewayProperties limits,
               WriteFailures writeFailures) {
        this.out = new ConcurrentWebSocketSessionDecorator(ws, (int) limits.sendTimeLimit().toMillis(),
                (int) limits.sendBufferLimit().toBytes(), ConcurrentWebSocketSessionDecorator.OverflowStrategy.TERMINATE);
        this.userId = userId;
        this.sessionId = sessionId;
        this.tokenGoodUntilMillis = tokenGoodUntilMillis;
        this.writeFailures = writeFailures;
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
    public long openedNanos() {
        return openedNanos;
    }

    @Override
    public long lastReceivedNanos() {
        return lastReceivedNanos;
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

    /** False from the first failed write or close on: nothing more is written. */
    private volatile boolean writable = true;
    private final java.util.concurrent.atomic.AtomicBoolean closeIssued = new java.util.concurrent.atomic.AtomicBoolean();

    @Override
    public boolean isOpen() {
        return writable && out.isOpen();
    }

    /** Stops all writes to this connection at once (its last write failed); false if already stopped. */
    boolean stopWriting() {
        boolean was = writable;
        writable = false;
        return was;
    }

    /**
     * Frames for this connection that arrived before its {@code welcome} was written: the
     * connection is registered (and so can be delivered to) just before welcome goes out, and
     * welcome must still be the first frame. Null once welcome is out.
     */
    private List<String> beforeWelcome = new ArrayList<>();
    private volatile boolean welcomed;

    /** Writes {@code welcome}, then whatever was sent to this connection meanwhile, and opens it. */
    void welcome(String frame) {
        synchronized (this) {
            write(frame);
            for (String early : beforeWelcome) {
                write(early);
            }
            beforeWelcome = null;
            welcomed = true;
        }
    }

    @Override
    public boolean send(String frame) {
        if (!writable) {
            return false;
        }
        if (!welcomed) {
            synchronized (this) {
                if (!welcomed) {
                    beforeWelcome.add(frame);
                    return true;
                }
            }
        }
        return write(frame);
    }

    private boolean write(String frame) {
        if (!writable || !out.isOpen()) {
            return false;
        }
        try {
            out.sendMessage(new TextMessage(frame));
            return out.isOpen();
        }
        catch (SessionLimitExceededException e) {
            // A client that does not read: its buffer or write time is spent. Withdraw it from live
            // delivery; it recovers from history on reconnect.
            if (stopWriting()) {
                writeFailures.failed(this, 4008, "withdrawn: not reading (send buffer or time limit exceeded)", e);
            }
            return false;
        }
        catch (Exception e) {
            // after a close was issued a write in flight may fail: that is the close, not a failure
            if (stopWriting() && !closeIssued.get()) {
                writeFailures.failed(this, CloseStatus.SERVER_ERROR.getCode(), "the server could not write to this connection", e);
            }
            return false;
        }
    }

    /**
     * Closes the connection with {@code code}: writes stop at once, and the close itself runs on
     * a virtual thread of its own, since it may wait (up to the container's blocking-send timeout)
     * for a write stuck on a client that does not read, and no loop may wait with it. The close
     * goes to the container's session directly: Spring's buffering decorator would drop a close
     * while another thread checks its limits, and would turn any code into 4500 once its buffer
     * overflowed. Only the first close counts.
     */
    @Override
    public void close(int code, String reason) {
        writable = false;
        if (closeIssued.compareAndSet(false, true)) {
            Thread.startVirtualThread(() -> closeNow(code, reason));
        }
    }

    /** Closes now, on the caller's thread (shutdown: the close must be sent before the server stops). */
    void closeAndWait(int code, String reason) {
        writable = false;
        if (closeIssued.compareAndSet(false, true)) {
            closeNow(code, reason);
        }
    }

    /**
     * A close that fails finds the socket already closed or broken: the container then reports it
     * closed ({@code afterConnectionClosed}), which unregisters it.
     */
    private void closeNow(int code, String reason) {
        try {
            out.getDelegate().close(new CloseStatus(code, reason));
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
