package dev.waterline.gateway;

import java.io.IOException;
import java.time.Duration;
import java.util.function.Consumer;

import org.springframework.web.socket.CloseStatus;
import org.springframework.web.socket.TextMessage;
import org.springframework.web.socket.WebSocketSession;
import org.springframework.web.socket.adapter.NativeWebSocketSession;

/**
 * How a connection's frames reach its socket: one text frame at a time, without ever making the
 * caller wait for the client. {@link #of} picks the container's asynchronous send (Tomcat:
 * the frame is written as far as the socket takes it at once, the rest when the poller finds the
 * socket writable again, and {@code done} runs then, on a container thread).
 */
interface Outlet {

    /**
     * Starts writing one text frame. {@code done} is called once, with null when the frame was
     * written or with the failure, perhaps on this thread before {@code send} returns (normally:
     * a frame still queued inside the container when the session closes may never complete).
     * Throws only when the frame cannot even be started (the session is closed).
     */
    void send(String text, Consumer<Throwable> done);

    boolean isOpen();

    void close(CloseStatus status) throws IOException;

    /** The container's asynchronous send for {@code ws}, with {@code sendTimeLimit} as its send timeout. */
    static Outlet of(WebSocketSession ws, Duration sendTimeLimit) {
        if (ws instanceof NativeWebSocketSession n && n.getNativeSession() instanceof jakarta.websocket.Session session) {
            jakarta.websocket.RemoteEndpoint.Async async = session.getAsyncRemote();
            async.setSendTimeout(sendTimeLimit.toMillis());
            // the container's own bound on the blocking sends it makes itself (pongs, the echo of a
            // client's close), no longer than ours
            session.getUserProperties().put("org.apache.tomcat.websocket.BLOCKING_SEND_TIMEOUT", sendTimeLimit.toMillis());
            return new Outlet() {
                @Override
                public void send(String text, Consumer<Throwable> done) {
                    async.sendText(text, result -> done.accept(result.isOK() ? null
                            : result.getException() != null ? result.getException() : new IOException("send failed")));
                }

                @Override
                public boolean isOpen() {
                    return ws.isOpen();
                }

                @Override
                public void close(CloseStatus status) throws IOException {
                    ws.close(status);
                }
            };
        }
        // Not a JSR-356 session (none in this server): a blocking write, on a thread of its own.
        return new Outlet() {
            @Override
            public void send(String text, Consumer<Throwable> done) {
                Thread.startVirtualThread(() -> {
                    try {
                        ws.sendMessage(new TextMessage(text));
                        done.accept(null);
                    }
                    catch (Exception e) {
                        done.accept(e);
                    }
                });
            }

            @Override
            public boolean isOpen() {
                return ws.isOpen();
            }

            @Override
            public void close(CloseStatus status) throws IOException {
                ws.close(status);
            }
        };
    }
}
