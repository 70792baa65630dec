package dev.waterline.gateway;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.util.unit.DataSize;
import org.springframework.web.socket.CloseStatus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A connection's writer: frames go out in order, welcome first, each write started by whoever
 * finds the writer idle and continued by the previous write's completion, so no caller ever
 * waits on the socket. A write that fails is never swallowed: the connection is handed to the
 * withdrawal path with 1011, or 4008 for a client that does not read (its queue past the send
 * buffer, or a write in flight past the send time), and nothing more is written.
 */
class ConnectionWriteFailureUnitTests {

    static final GatewayProperties LIMITS = new GatewayProperties(DataSize.ofKilobytes(64), 4000, 256, 200,
            Duration.ofSeconds(10), DataSize.ofBytes(64), 1000, Duration.ofSeconds(5), Duration.ofSeconds(10), DataSize.ofKilobytes(40), 0.5, 0.25);
    static final GatewayProperties ROOMY = new GatewayProperties(DataSize.ofKilobytes(64), 4000, 256, 200,
            Duration.ofSeconds(10), DataSize.ofMegabytes(1), 1000, Duration.ofSeconds(5), Duration.ofSeconds(10), DataSize.ofKilobytes(40), 0.5, 0.25);

    record Failure(String why, int code, Throwable cause) {
    }

    /** An outlet whose writes complete at once, later (held), or fail, as the test says. */
    static final class FakeOutlet implements Outlet {
        final List<String> written = new CopyOnWriteArrayList<>();
        final List<Consumer<Throwable>> held = new CopyOnWriteArrayList<>();
        volatile boolean hold;
        /** Each write completes a couple of milliseconds later, on a thread of its own. */
        volatile boolean slow;
        volatile Throwable failWith;
        volatile CloseStatus closedWith;

        @Override
        public void send(String text, Consumer<Throwable> done) {
            if (hold) {
                written.add(text);
                held.add(done);
                return;
            }
            if (failWith != null) {
                done.accept(failWith);
                return;
            }
            if (slow) {
                Thread.startVirtualThread(() -> {
                    java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(2).toNanos());
                    written.add(text);
                    done.accept(null);
                });
                return;
            }
            written.add(text);
            done.accept(null);
        }

        /** Completes the writes held so far, each on a thread of its own, as the container's poller would. */
        void release() {
            hold = false;
            List<Consumer<Throwable>> done = new ArrayList<>(held);
            held.clear();
            done.forEach(d -> Thread.startVirtualThread(() -> d.accept(null)));
        }

        @Override
        public boolean isOpen() {
            return closedWith == null;
        }

        @Override
        public void close(CloseStatus status) {
            closedWith = status;
        }
    }

    static Connection connection(FakeOutlet outlet, GatewayProperties limits, List<Failure> failures) {
        return connection(outlet, limits, new OutboundBudget(Long.MAX_VALUE), failures);
    }

    static Connection connection(FakeOutlet outlet, GatewayProperties limits, OutboundBudget budget, List<Failure> failures) {
        return new Connection(outlet, "alice", Long.MAX_VALUE, "s1", limits, budget, (c, why, code, reason, cause) -> {
            failures.add(new Failure(why, code, cause));
            c.close(code, reason);
        }, new SimpleMeterRegistry().counter("waterline.gateway.close.failures"));
    }

    @Test
    void welcomeIsWrittenFirstAndThenEveryFrameInTheOrderItWasSent() {
        FakeOutlet outlet = new FakeOutlet();
        Connection conn = connection(outlet, ROOMY, new CopyOnWriteArrayList<>());
        List<String> sent = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            sent.add("{\"n\":" + i + "}");
            conn.send(sent.getLast());
        }
        assertThat(outlet.written).as("nothing before welcome").isEmpty();
        conn.welcome("{\"type\":\"welcome\"}");
        for (int i = 5; i < 2000; i++) {
            sent.add("{\"n\":" + i + "}");
            conn.send(sent.getLast());
        }
        assertThat(outlet.written.getFirst()).isEqualTo("{\"type\":\"welcome\"}");
        assertThat(outlet.written.subList(1, outlet.written.size())).containsExactlyElementsOf(sent);
    }

    @Test
    void writesThatCompleteLaterAreContinuedByTheirCompletionInOrderWithNoWriteLeftBehind() throws Exception {
        FakeOutlet outlet = new FakeOutlet();
        Connection conn = connection(outlet, ROOMY, new CopyOnWriteArrayList<>());
        outlet.hold = true;
        conn.welcome("{\"type\":\"welcome\"}");
        List<String> sent = new ArrayList<>();
        List<Thread> senders = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            int from = t * 250;
            List<String> mine = new ArrayList<>();
            for (int i = from; i < from + 250; i++) {
                mine.add("{\"n\":" + i + "}");
            }
            synchronized (sent) {
                sent.addAll(mine);
            }
            senders.add(Thread.startVirtualThread(() -> mine.forEach(conn::send)));
        }
        for (Thread s : senders) {
            s.join();
        }
        assertThat(outlet.written).as("one write in flight at a time").hasSize(1);
        // completions arriving one at a time on other threads (as the container's poller sends
        // them) carry the queue to its end
        java.util.concurrent.atomic.AtomicBoolean completing = new java.util.concurrent.atomic.AtomicBoolean(true);
        Thread poller = Thread.startVirtualThread(() -> {
            while (completing.get()) {
                if (!outlet.held.isEmpty()) {
                    Consumer<Throwable> next = outlet.held.removeFirst();
                    Thread.startVirtualThread(() -> next.accept(null));
                }
                else {
                    java.util.concurrent.locks.LockSupport.parkNanos(20_000);
                }
            }
        });
        try {
            await().atMost(Duration.ofSeconds(10)).until(() -> outlet.written.size() == 1001 && outlet.held.isEmpty());
        }
        finally {
            completing.set(false);
            poller.join();
        }
        assertThat(outlet.written.getFirst()).isEqualTo("{\"type\":\"welcome\"}");
        assertThat(outlet.written.subList(1, 1001)).containsExactlyInAnyOrderElementsOf(sent);
        for (int t = 0; t < 4; t++) {
            int from = t * 250;
            List<Integer> order = outlet.written.stream().skip(1).map(w -> Integer.parseInt(w.replaceAll("\\D", "")))
                    .filter(n -> n >= from && n < from + 250).toList();
            assertThat(order).as("each sender's frames in the order it sent them").isSorted();
        }
        outlet.hold = false;
        conn.send("{\"last\":1}");
        await().atMost(Duration.ofSeconds(5)).until(() -> outlet.written.getLast().equals("{\"last\":1}"));
    }

    @Test
    void aWriteThatFailsWithdrawsTheConnectionWith1011AndNothingMoreIsWritten() {
        FakeOutlet outlet = new FakeOutlet();
        List<Failure> failures = new CopyOnWriteArrayList<>();
        Connection conn = connection(outlet, ROOMY, failures);
        conn.welcome("{\"type\":\"welcome\"}");
        outlet.failWith = new IOException("the frame cannot be encoded");

        assertThat(conn.send("{\"type\":\"message\"}")).isFalse();
        assertThat(failures).singleElement().satisfies(f -> {
            assertThat(f.code()).isEqualTo(CloseStatus.SERVER_ERROR.getCode());
            assertThat(f.why()).isEqualTo("write_failed");
            assertThat(f.cause()).hasMessageContaining("cannot be encoded");
        });
        await().atMost(Duration.ofSeconds(5)).until(() -> outlet.closedWith != null);
        assertThat(outlet.closedWith.getCode()).isEqualTo(1011);
        outlet.failWith = null;
        assertThat(conn.send("{\"type\":\"message\"}")).as("nothing more is taken").isFalse();
        assertThat(outlet.written).containsExactly("{\"type\":\"welcome\"}");
    }

    @Test
    void aClientThatDoesNotReadCostsItsCallersNoWaitAndIsWithdrawnWith4008WhenItsQueueIsFull() {
        FakeOutlet outlet = new FakeOutlet();
        List<Failure> failures = new CopyOnWriteArrayList<>();
        Connection conn = connection(outlet, LIMITS, failures);
        outlet.hold = true;   // the socket takes nothing: every write stays in flight
        conn.welcome("{\"type\":\"welcome\"}");

        for (int i = 0; i < 10 && failures.isEmpty(); i++) {
            conn.send("{\"type\":\"message\",\"n\":" + i + "}");
        }
        assertThat(failures).singleElement().satisfies(f -> {
            assertThat(f.code()).isEqualTo(4008);
            assertThat(f.why()).isEqualTo("send_buffer");
        });
        await().atMost(Duration.ofSeconds(5)).until(() -> outlet.closedWith != null);
        assertThat(outlet.closedWith.getCode()).isEqualTo(4008);
        assertThat(conn.send("{\"type\":\"message\"}")).isFalse();
    }

    @Test
    void whenTheServersOutboundBudgetIsSpentAClientWithMoreThanItsFloorWaitingIsWithdrawnWith4008() {
        OutboundBudget budget = new OutboundBudget(3 * OutboundBudget.FLOOR_CHARS);
        List<Failure> failures = new CopyOnWriteArrayList<>();
        FakeOutlet stuck = new FakeOutlet();
        Connection notReading = connection(stuck, ROOMY, budget, failures);
        stuck.hold = true;
        notReading.welcome("{\"type\":\"welcome\"}");
        FakeOutlet fine = new FakeOutlet();
        Connection reading = connection(fine, ROOMY, budget, failures);
        reading.welcome("{\"type\":\"welcome\"}");

        String frame = "{\"type\":\"chunk\",\"data\":\"" + "x".repeat(4_000) + "\"}";
        for (int i = 0; i < 20 && failures.isEmpty(); i++) {
            notReading.send(frame);
            assertThat(reading.send(frame)).as("a client that reads keeps its queue empty").isTrue();
        }
        assertThat(failures).as("well within its own 1 MiB send buffer, but past the server's budget")
                .singleElement().satisfies(f -> {
                    assertThat(f.code()).isEqualTo(4008);
                    assertThat(f.why()).isEqualTo("outbound_budget");
                });
        assertThat(reading.send(frame)).isTrue();
        assertThat(fine.written).hasSizeGreaterThan(10);
    }

    @Test
    void everyCharacterAQueueTookFromTheBudgetIsGivenBackWhenItsConnectionCloses() {
        OutboundBudget budget = new OutboundBudget(Long.MAX_VALUE);
        FakeOutlet outlet = new FakeOutlet();
        Connection conn = connection(outlet, ROOMY, budget, new CopyOnWriteArrayList<>());
        outlet.hold = true;
        conn.welcome("{\"type\":\"welcome\"}");
        for (int i = 0; i < 50; i++) {
            conn.send("{\"type\":\"message\",\"n\":" + i + "}");
        }
        assertThat(budget.queued()).isPositive();
        conn.close(4000, "idle");
        assertThat(budget.queued()).isEqualTo(conn.queuedChars()).isZero();

        FakeOutlet other = new FakeOutlet();
        Connection written = connection(other, ROOMY, budget, new CopyOnWriteArrayList<>());
        written.welcome("{\"type\":\"welcome\"}");
        for (int i = 0; i < 50; i++) {
            written.send("{\"type\":\"message\",\"n\":" + i + "}");
        }
        assertThat(other.written).hasSize(51);
        assertThat(budget.queued()).as("written frames are given back as they leave the queue").isZero();
    }

    @Test
    void aWriteInFlightLongerThanTheSendTimeLimitWithdrawsTheConnectionWith4008() {
        FakeOutlet outlet = new FakeOutlet();
        List<Failure> failures = new CopyOnWriteArrayList<>();
        Connection conn = connection(outlet, ROOMY, failures);
        outlet.hold = true;
        conn.welcome("{\"type\":\"welcome\"}");

        conn.failIfStuck(System.nanoTime());
        assertThat(failures).as("in flight, but not for 10 s yet").isEmpty();
        conn.failIfStuck(System.nanoTime() + Duration.ofSeconds(11).toNanos());
        assertThat(failures).singleElement().satisfies(f -> {
            assertThat(f.code()).isEqualTo(4008);
            assertThat(f.why()).isEqualTo("send_time");
        });
    }

    @Test
    void theContainersSendTimeoutIsAlsoAWithdrawalWith4008() {
        FakeOutlet outlet = new FakeOutlet();
        List<Failure> failures = new CopyOnWriteArrayList<>();
        Connection conn = connection(outlet, ROOMY, failures);
        conn.welcome("{\"type\":\"welcome\"}");
        outlet.failWith = new SocketTimeoutException("async send timed out");
        conn.send("{\"type\":\"message\"}");
        assertThat(failures).singleElement().extracting(Failure::code, Failure::why).containsExactly(4008, "send_time");
    }

    @Test
    void aWriteThatFailsBecauseTheClientHadClosedIsNoFailure() {
        FakeOutlet outlet = new FakeOutlet();
        List<Failure> failures = new CopyOnWriteArrayList<>();
        Connection conn = connection(outlet, ROOMY, failures);
        conn.welcome("{\"type\":\"welcome\"}");
        outlet.closedWith = CloseStatus.NORMAL;
        outlet.failWith = new IllegalStateException("Message will not be sent because the WebSocket session has been closed");
        conn.send("{\"type\":\"message\"}");
        assertThat(failures).isEmpty();
        assertThat(conn.isOpen()).isFalse();
    }

    @Test
    void shutdownLetsTheWriterFinishWhatIsQueuedThenCloses() {
        FakeOutlet outlet = new FakeOutlet();
        Connection conn = connection(outlet, ROOMY, new CopyOnWriteArrayList<>());
        outlet.slow = true;
        conn.welcome("{\"type\":\"welcome\"}");
        List<String> answers = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            answers.add("{\"type\":\"accepted\",\"n\":" + i + "}");
            conn.send(answers.getLast());
        }
        conn.drainThenClose(1001, "server shutting down", System.nanoTime() + Duration.ofSeconds(5).toNanos());
        assertThat(outlet.written).hasSize(21).startsWith("{\"type\":\"welcome\"}").endsWith(answers.getLast());
        assertThat(outlet.closedWith.getCode()).isEqualTo(1001);
    }
}
