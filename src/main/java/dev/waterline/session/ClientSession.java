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
     * not be handed to the socket.
     */
    boolean send(String frame);

    /** When the connection opened, in {@link System#nanoTime()} terms. */
    long openedNanos();

    /** When the client last sent a frame (any frame), in {@link System#nanoTime()} terms. */
    long lastReceivedNanos();

    /** Closes the connection with a WebSocket close code. Idempotent. */
    void close(int code, String reason);
}
