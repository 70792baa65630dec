package dev.waterline.session;

/**
 * One connected client. The object itself is the connection's epoch: a verdict or a delivery
 * decided against a session that is no longer the registered one for its user is dropped.
 */
public interface ClientSession {

    String userId();

    /** Unique per connection; also keys the connection's entry in the Redis index. */
    String sessionId();

    boolean isOpen();

    /**
     * Writes one text frame. Thread-safe; never blocks on a slow client for long (writes beyond
     * the connection's send buffer or time limit close it). Returns false when the frame could
     * not be handed to the socket; a write that fails for any other reason withdraws the
     * connection and closes it with 1011 (never an ack).
     */
    boolean send(String frame);

    /**
     * As {@link #send(String)}; {@code written} runs once the frame has been written to the socket
     * (on whatever thread completes the write, so it must be quick), and not at all if it never
     * is. The latency histograms measure to that moment, not to the queue.
     */
    default boolean send(String frame, Runnable written) {
        boolean sent = send(frame);
        if (sent) {
            written.run();
        }
        return sent;
    }

    /**
     * Characters queued for this connection and not yet written to its socket: what a producer of
     * many frames (a stream's replay) paces itself by, so that it never fills the send buffer.
     */
    default long queuedChars() {
        return 0;
    }

    /** When the connection opened, in {@link System#nanoTime()} terms. */
    long openedNanos();

    /** When the client last sent a frame (any frame), in {@link System#nanoTime()} terms. */
    long lastReceivedNanos();

    /**
     * When {@code welcome} was queued for this connection, in {@link System#nanoTime()} terms, or 0
     * before it was. With {@link #closeIssuedNanos} it gives the server's own order of a newer
     * connection's welcome and an older one's 4009, which a client watching two sockets cannot see
     * reliably.
     */
    default long welcomedNanos() {
        return 0;
    }

    /** When the server first issued a close of this connection, in {@link System#nanoTime()} terms, or 0 if it has not. */
    default long closeIssuedNanos() {
        return 0;
    }

    /**
     * Epoch milliseconds from which the token this connection was opened with is no longer
     * accepted ({@code exp} plus the clock skew); {@link Long#MAX_VALUE} when it never expires.
     * The connection is closed with 4001 then.
     */
    long tokenGoodUntilMillis();

    /**
     * Takes one in-flight credit and one token of the connection's rate for a {@code send};
     * false when either is spent (nothing taken). The credit comes back with {@link #answered}.
     */
    boolean admitSend();

    /** Returns the credit of a {@code send} that has been answered. */
    void answered();

    /**
     * Takes one token of the connection's rate (shared with sends) for a frame that costs work but
     * holds no credit, such as a read receipt; false when the rate is spent.
     */
    boolean admitRate();

    /** Closes the connection with a WebSocket close code. Idempotent. */
    void close(int code, String reason);

    /**
     * {@link #close} on the caller's thread: returns once the close frame has been handed to the
     * socket (or the socket found broken), so that what the caller does next (welcome a newer
     * connection of the same user) comes after it. Idempotent; a close already under way is not
     * waited for.
     */
    default void closeNow(int code, String reason) {
        close(code, reason);
    }
}
