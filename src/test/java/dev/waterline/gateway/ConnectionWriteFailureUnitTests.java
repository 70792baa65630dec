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
import static org.awaitility.Awaitility.await;

/**
 * A write that fails is never swallowed: the connection is handed to the withdrawal path with
 * 1011 (or 4008 for a client that does not read: its buffer spent, or one write blocked past the
 * send time limit), so its client reconnects and resyncs instead of sitting on an open socket
 * that receives nothing; and no caller ever waits on a client's socket.
 */
class ConnectionWriteFailureUnitTests {

    static final GatewayProperties LIMITS = new GatewayProperties(DataSize.ofKilobytes(64), 4000, 256, 200,
            Duration.ofSeconds(10), DataSize.ofBytes(64), 1000);

    record Failure(int code, String reason, Exception cause) {
    }

    @Test
    void aWriteThatThrowsWithdrawsTheConnectionWith1011() {
        FakeSocket socket = new FakeSocket();
        List<Failure> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        Connection conn = new Connection(socket, "alice", Long.MAX_VALUE, "s1", LIMITS, (c, code, reason, cause) -> {
            failures.add(new Failure(code, reason, cause));
            c.close(code, reason);
        });
        conn.welcome("{\"type\":\"welcome\"}");
        await().atMost(Duration.ofSeconds(5)).until(() -> socket.sent.size() == 1);

        socket.failWith = new IOException("the frame cannot be encoded");
        assertThat(conn.send("{\"type\":\"message\"}")).as("queued").isTrue();

        await().atMost(Duration.ofSeconds(5)).until(() -> !failures.isEmpty());
        assertThat(failures).singleElement().satisfies(f -> {
            assertThat(f.code()).isEqualTo(CloseStatus.SERVER_ERROR.getCode());
            assertThat(f.cause()).hasMessageContaining("cannot be encoded");
        });
        await().atMost(Duration.ofSeconds(5)).until(() -> socket.closedWith != null);
        assertThat(socket.closedWith.getCode()).isEqualTo(1011);
        assertThat(conn.send("{\"type\":\"message\"}")).as("nothing more is taken").isFalse();
    }

    @Test
    void aClientThatDoesNotReadStallsOnlyItsOwnWriterAndIsWithdrawnWith4008() {
        FakeSocket socket = new FakeSocket();
        List<Failure> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        Connection conn = new Connection(socket, "bob", Long.MAX_VALUE, "s2", LIMITS, (c, code, reason, cause) -> {
            failures.add(new Failure(code, reason, cause));
            c.close(code, reason);
        });
        socket.blockForever = true;
        conn.welcome("{\"type\":\"welcome\"}");
        await().atMost(Duration.ofSeconds(5)).until(() -> socket.writing);

        // The caller (in the server: a group-commit writer answering, a fast-path worker) never
        // waits: the frames queue behind the blocked write until the 64-character buffer is spent.
        long start = System.nanoTime();
        for (int i = 0; i < 10 && failures.isEmpty(); i++) {
            conn.send("{\"type\":\"message\",\"n\":" + i + "}");
        }
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
        assertThat(failures).singleElement().extracting(Failure::code).isEqualTo(4008);
        await().atMost(Duration.ofSeconds(5)).until(() -> socket.closedWith != null);
        assertThat(socket.closedWith.getCode()).as("the code given, not the 4500 Spring's decorator would send").isEqualTo(4008);
        assertThat(conn.send("{\"type\":\"message\"}")).isFalse();
    }

    @Test
    void aWriteBlockedLongerThanTheSendTimeLimitWithdrawsTheConnectionWith4008() {
        FakeSocket socket = new FakeSocket();
        List<Failure> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        Connection conn = new Connection(socket, "carol", Long.MAX_VALUE, "s3", LIMITS,
                (c, code, reason, cause) -> failures.add(new Failure(code, reason, cause)));
        socket.blockForever = true;
        conn.welcome("{\"type\":\"welcome\"}");
        await().atMost(Duration.ofSeconds(5)).until(() -> socket.writing);

        conn.failIfStuck(System.nanoTime());
        assertThat(failures).as("blocked, but not for 10 s yet").isEmpty();
        conn.failIfStuck(System.nanoTime() + Duration.ofSeconds(11).toNanos());
        assertThat(failures).singleElement().extracting(Failure::code).isEqualTo(4008);
    }

    @Test
    void welcomeIsWrittenFirstAndThenEveryFrameInTheOrderItWasSent() {
        FakeSocket socket = new FakeSocket();
        GatewayProperties roomy = new GatewayProperties(DataSize.ofKilobytes(64), 4000, 256, 200,
                Duration.ofSeconds(10), DataSize.ofMegabytes(1), 1000);
        Connection conn = new Connection(socket, "dave", Long.MAX_VALUE, "s4", roomy, (c, code, reason, cause) -> {
        });
        List<String> sent = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            sent.add("{\"n\":" + i + "}");
            conn.send(sent.getLast());
        }
        conn.welcome("{\"type\":\"welcome\"}");
        for (int i = 5; i < 200; i++) {
            sent.add("{\"n\":" + i + "}");
            conn.send(sent.getLast());
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> socket.sent.size() == 201);
        assertThat(socket.sent.getFirst().getPayload()).isEqualTo("{\"type\":\"welcome\"}");
        assertThat(socket.sent.subList(1, 201)).extracting(m -> (String) m.getPayload()).containsExactlyElementsOf(sent);
    }

    /** A WebSocketSession whose writes succeed, throw, or block, as the test says. */
    static final class FakeSocket implements WebSocketSession {
        final List<WebSocketMessage<?>> sent = new java.util.concurrent.CopyOnWriteArrayList<>();
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
