package dev.waterline.gateway;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import dev.waterline.WaterlineApplication;
import dev.waterline.config.EmbeddedServers;
import dev.waterline.support.Api;
import dev.waterline.support.EmbeddedData;
import dev.waterline.support.WsClient;
import org.junit.jupiter.api.Test;
import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Stopping the server while clients send (as on SIGTERM): readiness goes down first; every send
 * the server committed was answered {@code accepted} before its client was told 1001 (never
 * half: committed but unanswered); every {@code accepted} is in history; every other answer is a
 * refusal a client retries; no send is answered twice.
 */
class GracefulShutdownIntegrationTests {

    static final int SENDERS = 8;

    @Test
    void stoppingUnderLoadAnswersWhatItCommittedThenCloses1001AndHistoryHasEveryAccepted() throws Exception {
        AtomicLong refusingTrafficAt = new AtomicLong();
        ConfigurableApplicationContext ctx = new SpringApplicationBuilder(WaterlineApplication.class)
                .profiles("test")
                .listeners((ApplicationListener<AvailabilityChangeEvent<?>>) e -> {
                    if (e.getState() == ReadinessState.REFUSING_TRAFFIC) {
                        refusingTrafficAt.compareAndSet(0, System.nanoTime());
                    }
                })
                .run("--server.port=0", "--waterline.embedded.database=graceful", "--spring.data.redis.database=9");
        int port = ((WebServerApplicationContext) ctx).getWebServer().getPort();
        Api api = new Api(port);
        List<WsClient> clients = new ArrayList<>();
        List<String> users = new ArrayList<>();
        List<String> chats = new ArrayList<>();
        List<List<String>> sent = new ArrayList<>();
        AtomicBoolean go = new AtomicBoolean(true);
        List<Thread> senders = new ArrayList<>();
        try {
            for (int i = 0; i < SENDERS; i++) {
                String user = "graceful-" + i;
                String token = api.token(user);
                users.add(user);
                chats.add(api.createChat(token, "graceful-sink-" + i));
                clients.add(WsClient.connectWelcomed(port, token));
                sent.add(java.util.Collections.synchronizedList(new ArrayList<>()));
            }
            for (int i = 0; i < SENDERS; i++) {
                WsClient c = clients.get(i);
                String chat = chats.get(i);
                List<String> mine = sent.get(i);
                senders.add(Thread.startVirtualThread(() -> {
                    for (int n = 0; go.get() && !c.isClosed(); n++) {
                        String corr = "g-" + n;
                        try {
                            c.sendMessage(corr, chat, "message " + n);
                            mine.add(corr);
                        }
                        catch (RuntimeException closed) {
                            return;
                        }
                        java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(5).toNanos());
                    }
                }));
            }
            await().atMost(Duration.ofSeconds(20)).until(() -> clients.stream().allMatch(c -> accepted(c).size() >= 20));
        }
        finally {
            ctx.close();
            go.set(false);
        }
        for (Thread t : senders) {
            t.join(Duration.ofSeconds(10));
        }

        int pg = EmbeddedServers.postgresPort(EmbeddedData.DIR, true, "graceful");
        try (Connection db = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + pg + "/graceful", "postgres", "")) {
            for (int i = 0; i < SENDERS; i++) {
                WsClient c = clients.get(i);
                assertThat(c.awaitClose(Duration.ofSeconds(10))).as("client %d", i).isEqualTo(1001);
                assertThat(refusingTrafficAt.get()).as("readiness went down").isPositive();
                assertThat(refusingTrafficAt.get()).as("readiness went down before client %d was told 1001", i)
                        .isLessThan(c.closedAtNanos());

                Map<String, String> committed = new HashMap<>();
                try (PreparedStatement q = db.prepareStatement(
                        "SELECT correlation_id, message_id FROM message_history WHERE sender_id = ?")) {
                    q.setString(1, users.get(i));
                    try (ResultSet rs = q.executeQuery()) {
                        while (rs.next()) {
                            committed.put(rs.getString(1), rs.getString(2));
                        }
                    }
                }
                Map<String, JsonNode> answers = new HashMap<>();
                for (JsonNode f : c.received()) {
                    String type = f.path("type").asString();
                    if (type.equals("accepted") || (type.equals("error") && f.has("correlationId"))) {
                        JsonNode earlier = answers.put(f.get("correlationId").asString(), f);
                        assertThat(earlier).as("%s answered once", f.get("correlationId")).isNull();
                    }
                }
                Map<String, String> acceptedIds = accepted(c);
                assertThat(acceptedIds).as("client %d: answered accepted exactly what was committed, before the close", i)
                        .isNotEmpty().isEqualTo(committed);
                answers.values().stream().filter(f -> f.path("type").asString().equals("error"))
                        .forEach(f -> assertThat(f.get("code").asString()).as(f.toString())
                                .isIn("unavailable", "rate_limited"));
                assertThat(sent.get(i)).as("every answer is for a send made").containsAll(answers.keySet());
                // every send is answered but those that crossed the close: the answered ones are a
                // prefix of what the client sent, in order, with no send left unanswered before it
                List<String> order = List.copyOf(sent.get(i));
                int lastAnswered = -1;
                for (int k = 0; k < order.size(); k++) {
                    if (answers.containsKey(order.get(k))) {
                        lastAnswered = k;
                    }
                }
                assertThat(order.subList(0, lastAnswered + 1)).as("client %d: no send before the last answered one went unanswered", i)
                        .allMatch(answers::containsKey);
            }
        }
        clients.forEach(WsClient::close);
    }

    /**
     * A database too slow for the drain: the chat's row is locked by another transaction, so the
     * batch in flight waits on it while more sends queue behind it. Past {@code drain-timeout} the
     * queued sends are answered {@code unavailable}; the batch in flight is waited for and, once
     * the lock goes, committed and answered {@code accepted}; only then is the client told 1001.
     * Nothing is half: history holds exactly what was answered {@code accepted}.
     */
    @Test
    void pastTheDrainTimeoutQueuedSendsAreRefusedAndTheBatchInFlightIsAnsweredBeforeTheClose() throws Exception {
        ConfigurableApplicationContext ctx = new SpringApplicationBuilder(WaterlineApplication.class)
                .profiles("test")
                .run("--server.port=0", "--waterline.embedded.database=slowdrain", "--spring.data.redis.database=10",
                        "--waterline.inbound.drain-timeout=1s", "--waterline.inbound.commit-timeout=30s");
        int port = ((WebServerApplicationContext) ctx).getWebServer().getPort();
        Api api = new Api(port);
        String token = api.token("slowdrain-alice");
        String chat = api.createChat(token, "slowdrain-bob");
        int pg = EmbeddedServers.postgresPort(EmbeddedData.DIR, true, "slowdrain");
        Thread closing = null;
        String url = "jdbc:postgresql://127.0.0.1:" + pg + "/slowdrain";
        try (WsClient c = WsClient.connectWelcomed(port, token);
             Connection lock = DriverManager.getConnection(url, "postgres", "");
             Connection probe = DriverManager.getConnection(url, "postgres", "")) {
            lock.setAutoCommit(false);
            try (PreparedStatement q = lock.prepareStatement("SELECT 1 FROM chats WHERE chat_id = ? FOR UPDATE")) {
                q.setString(1, chat);
                q.executeQuery().close();
            }
            c.sendMessage("in-flight", chat, "waits for the lock");
            await().atMost(Duration.ofSeconds(10)).until(() -> waitingOnLock(probe) > 0);
            for (int i = 0; i < 20; i++) {
                c.sendMessage("queued-" + i, chat, "behind it " + i);
            }
            var ingest = ctx.getBean(dev.waterline.ingest.Ingest.class);
            await().atMost(Duration.ofSeconds(10)).until(() -> metric(ctx, "waterline.inbound.queue.depth") == 20);

            closing = Thread.startVirtualThread(ctx::close);
            for (int i = 0; i < 20; i++) {
                JsonNode answer = c.answer("queued-" + i);
                assertThat(answer.get("type").asString()).as(answer.toString()).isEqualTo("error");
                assertThat(answer.get("code").asString()).isEqualTo("unavailable");
            }
            assertThat(ingest.isRunning()).isFalse();
            assertThat(c.isClosed()).as("no close while a batch is in flight").isFalse();
            lock.rollback();

            assertThat(c.answer("in-flight").get("type").asString()).isEqualTo("accepted");
            assertThat(c.awaitClose(Duration.ofSeconds(20))).isEqualTo(1001);
            closing.join(Duration.ofSeconds(30));
        }
        finally {
            if (closing == null) {
                ctx.close();
            }
        }
        try (Connection db = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + pg + "/slowdrain", "postgres", "");
             PreparedStatement q = db.prepareStatement("SELECT correlation_id FROM message_history WHERE chat_id = ?")) {
            q.setString(1, chat);
            List<String> stored = new ArrayList<>();
            try (ResultSet rs = q.executeQuery()) {
                while (rs.next()) {
                    stored.add(rs.getString(1));
                }
            }
            assertThat(stored).containsExactly("in-flight");
        }
    }

    /** Backends waiting on a lock (the server's, on the test's lock); {@code probe} is in autocommit, so each call is a fresh snapshot. */
    private static int waitingOnLock(Connection probe) throws Exception {
        try (PreparedStatement q = probe.prepareStatement(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()");
             ResultSet rs = q.executeQuery()) {
            rs.next();
            return rs.getInt(1);
        }
    }

    private static double metric(ConfigurableApplicationContext ctx, String name) {
        return ctx.getBean(io.micrometer.core.instrument.MeterRegistry.class).get(name).gauge().value();
    }

    /** correlationId → messageId of every accepted frame the client received. */
    private static Map<String, String> accepted(WsClient c) {
        Map<String, String> out = new HashMap<>();
        for (JsonNode f : c.received()) {
            if ("accepted".equals(f.path("type").asString())) {
                out.put(f.get("correlationId").asString(), f.get("messageId").asString());
            }
        }
        return out;
    }
}
