package dev.waterline.load.clients;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/** {@link WsLink} over the JDK's {@code java.net.http} WebSocket client. */
final class JdkWsLink implements WsLink {

    private final WebSocket socket;
    private final Listener listener;

    private JdkWsLink(WebSocket socket, Listener listener) {
        this.socket = socket;
        this.listener = listener;
    }

    @Override
    public void send(String frame) {
        socket.sendText(frame, true).orTimeout(10, TimeUnit.SECONDS).join();
    }

    @Override
    public void pauseReading() {
        listener.reading = false;
    }

    @Override
    public void close(String reason) {
        socket.sendClose(WebSocket.NORMAL_CLOSURE, reason).exceptionally(e -> null);
        socket.abort();
    }

    static final class Connector implements WsLink.Connector {
        private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

        @Override
        public CompletableFuture<WsLink> connect(URI uri, String token, Events events) {
            Listener listener = new Listener(events);
            return http.newWebSocketBuilder()
                    .header("Authorization", "Bearer " + token)
                    .connectTimeout(Duration.ofSeconds(10))
                    .buildAsync(uri, listener)
                    .thenApply(ws -> new JdkWsLink(ws, listener));
        }

        @Override
        public void close() {
            http.shutdownNow();
        }
    }

    private static final class Listener implements WebSocket.Listener {
        private final Events events;
        private final StringBuilder partial = new StringBuilder();
        private final AtomicBoolean closed = new AtomicBoolean();
        volatile boolean reading = true;

        Listener(Events events) {
            this.events = events;
        }

        @Override
        public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
            partial.append(data);
            if (last) {
                try {
                    events.onText(partial.toString());
                }
                finally {
                    partial.setLength(0);
                }
            }
            if (reading) {
                ws.request(1);
            }
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket ws, int statusCode, String reason) {
            if (closed.compareAndSet(false, true)) {
                events.onClose(statusCode);
            }
            return null;
        }

        @Override
        public void onError(WebSocket ws, Throwable error) {
            if (closed.compareAndSet(false, true)) {
                events.onClose(1006);
            }
        }
    }
}
