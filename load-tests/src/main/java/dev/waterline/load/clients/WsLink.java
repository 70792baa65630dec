package dev.waterline.load.clients;

import java.net.URI;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * One simulated client's WebSocket, whichever client library carries it. Text frames only, as
 * PROTOCOL.md has them.
 */
public interface WsLink {

    /** What the link reports back. Called on the transport's threads, one call at a time per link. */
    interface Events {
        void onText(String frame);

        /** The server closed (its close code) or the connection broke (1006). At most once. */
        void onClose(int code);

        /**
         * The transport has handed over every frame of one read from the socket; only links that
         * {@link #writesOnReadComplete() write on read complete} call it, on the thread that
         * called {@link #onText}.
         */
        default void onReadComplete() {
        }
    }

    /**
     * True when {@link #send} may be called from {@link Events#onReadComplete} and queues the
     * frame without waiting there (netty: the event loop writes it, no thread hand-off).
     */
    default boolean writesOnReadComplete() {
        return false;
    }

    /** Which client library: netty (the default, cheap per frame) or jdk (java.net.http). */
    enum Kind { netty, jdk }

    /** Writes one text frame; returns once it is queued (jdk: written). */
    void send(String frame) throws Exception;

    /**
     * Queues one text frame from any thread without waiting, and tells {@code done} once the
     * write is over (true: on the socket; false: the connection failed first); returns false
     * (nothing queued, {@code done} never told) when the link cannot take it that way right now
     * (jdk: never; netty: closed, or its outbound buffer is over the high-water mark). The caller
     * then goes the ordinary way, through the client's writer.
     */
    default boolean trySendNow(String frame, Consumer<Boolean> done) {
        return false;
    }

    /** Stops reading from the socket: the server sees a full TCP window. */
    void pauseReading();

    /** Sends a normal close and drops the connection without waiting. */
    void close(String reason);

    /** Connects with the token in the Authorization header; completes once the upgrade succeeded. */
    interface Connector extends AutoCloseable {
        CompletableFuture<WsLink> connect(URI uri, String token, Events events);

        @Override
        void close();
    }

    static Connector connector(Kind kind) {
        return switch (kind) {
            case netty -> new NettyWsLink.Connector();
            case jdk -> new JdkWsLink.Connector();
        };
    }
}
