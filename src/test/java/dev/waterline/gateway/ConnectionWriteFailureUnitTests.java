package dev.waterline.gateway;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.security.Principal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.http.HttpHeaders;
import org.springframework.util.unit.DataSize;
import org.springframework.web.socket.CloseStatus;
import org.springframework.web.socket.WebSocketExtension;
import org.springframework.web.socket.WebSocketMessage;
import org.springframework.web.socket.WebSocketSession;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A write that fails is never swallowed: the connection is handed to the withdrawal path with
 * 1011 (or 4008 for a client whose send buffer is spent), so its client reconnects and resyncs
 * instead of sitting on an open socket that receives nothing.
 */
class ConnectionWriteFailureUnitTests {

    static final GatewayProperties LIMITS = new GatewayProperties(DataSize.ofKilobytes(64), 4000, 256, 200,
            Duration.ofSeconds(10), DataSize.ofBytes(64), 1000);

    record Failure(int code, String reason, Exception cause) {
    }

    @Test
    void aWriteThatThrowsWithdrawsTheConnectionWith1011() {
        FakeSocket socket = new FakeSocket();
        List<Failure> failures = new ArrayList<>();
        Connection conn = new Connection(socket, "alice", Long.MAX_VALUE, "s1", LIMITS,
                (c, code, reason, cause) -> failures.add(new Failure(code, reason, cause)));
        conn.welcome("{\"type\":\"welcome\"}");
        assertThat(socket.sent).hasSize(1);

        socket.failWith = new IOException("the frame cannot be encoded");
        assertThat(conn.send("{\"type\":\"message\"}")).isFalse();

        assertThat(failures).singleElement().satisfies(f -> {
            assertThat(f.code()).isEqualTo(CloseStatus.SERVER_ERROR.getCode());
            assertThat(f.cause()).hasMessageContaining("cannot be encoded");
        });
    }

    @Test
    void aClientThatDoesNotReadIsWithdrawnWith4008() {
        FakeSocket socket = new FakeSocket();
        List<Failure> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        Connection conn = new Connection(socket, "bob", Long.MAX_VALUE, "s2", LIMITS, (c, code, reason, cause) -> {
            failures.add(new Failure(code, reason, cause));
            c.close(code, reason);
        });
        conn.welcome("{\"type\":\"welcome\"}");
        // The next write blocks in the socket (a client that stopped reading), so the ones after
        // it pile up in the connection's 64-byte buffer until it overflows.
        socket.blockForever = true;
        Thread writer = Thread.startVirtualThread(() -> conn.send("{\"type\":\"message\",\"n\":-1}"));
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> socket.writing);
        for (int i = 0; i < 10 && failures.isEmpty(); i++) {
            conn.send("{\"type\":\"message\",\"n\":" + i + "}");
        }
        assertThat(failures).isNotEmpty();
        assertThat(failures.getFirst().code()).isEqualTo(4008);
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> socket.closedWith != null);
        assertThat(socket.closedWith.getCode()).as("the client sees 4008, not the decorator's 4500").isEqualTo(4008);
        assertThat(conn.send("{\"type\":\"message\"}")).as("nothing more is written").isFalse();
        writer.interrupt();
    }

    /** A WebSocketSession whose writes succeed, throw, or block, as the test says. */
    static final class FakeSocket implements WebSocketSession {
        final List<WebSocketMessage<?>> sent = new ArrayList<>();
        volatile IOException failWith;
        volatile boolean blockForever;
        volatile boolean writing;
        volatile boolean open = true;
        volatile CloseStatus closedWith;

        @Override
        public void sendMessage(WebSocketMessage<?> message) throws IOException {
            if (failWith != null) {
                throw failWith;
            }
            if (blockForever) {
                writing = true;
                try {
                    Thread.sleep(Long.MAX_VALUE);
                }
                catch (InterruptedException e) {
                    throw new IOException("interrupted");
                }
            }
            sent.add(message);
        }

        @Override
        public String getId() {
            return "fake";
        }

        @Override
        public URI getUri() {
            return URI.create("ws://127.0.0.1/ws");
        }

        @Override
        public HttpHeaders getHandshakeHeaders() {
            return new HttpHeaders();
        }

        @Override
        public Map<String, Object> getAttributes() {
            return new HashMap<>();
        }

        @Override
        public Principal getPrincipal() {
            return null;
        }

        @Override
        public InetSocketAddress getLocalAddress() {
            return null;
        }

        @Override
        public InetSocketAddress getRemoteAddress() {
            return null;
        }

        @Override
        public String getAcceptedProtocol() {
            return null;
        }

        @Override
        public void setTextMessageSizeLimit(int messageSizeLimit) {
        }

        @Override
        public int getTextMessageSizeLimit() {
            return 0;
        }

        @Override
        public void setBinaryMessageSizeLimit(int messageSizeLimit) {
        }

        @Override
        public int getBinaryMessageSizeLimit() {
            return 0;
        }

        @Override
        public List<WebSocketExtension> getExtensions() {
            return List.of();
        }

        @Override
        public boolean isOpen() {
            return open;
        }

        @Override
        public void close() {
            open = false;
        }

        @Override
        public void close(CloseStatus status) {
            closedWith = status;
            open = false;
        }
    }
}
