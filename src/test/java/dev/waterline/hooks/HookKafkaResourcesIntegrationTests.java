package dev.waterline.hooks;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.waterline.support.Api;
import dev.waterline.support.WsClient;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.SoftAssertions.assertSoftly;
import static org.awaitility.Awaitility.await;

/**
 * Kafka hooks to brokers that cannot be reached (issue 31, item 7): fifty hooks, each to its own
 * loopback port with nothing listening, keep at most {@code kafka-max-producers} producers (and so
 * producer threads) alive, close them once the hooks are deleted, and leave kafka-clients' own
 * log nearly silent meanwhile.
 */
@HooksTestContext
class HookKafkaResourcesIntegrationTests {

    static final int HOOKS = 50;
    static final String PRODUCER_THREAD = "kafka-producer-network-thread | waterline-hooks";

    @LocalServerPort
    int port;

    @Value("${waterline.hooks.kafka-max-producers:16}")
    int maxProducers;

    @Autowired
    JdbcTemplate jdbc;

    static long producerThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.isAlive() && t.getName().startsWith(PRODUCER_THREAD)).count();
    }

    /** Ports on loopback that nothing listens on (bound for a moment, then let go). */
    static List<Integer> deadPorts(int n) throws IOException {
        List<ServerSocket> held = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                held.add(new ServerSocket(0, 1, InetAddress.getByName("localhost")));
            }
            return held.stream().map(ServerSocket::getLocalPort).toList();
        }
        finally {
            for (ServerSocket s : held) {
                s.close();
            }
        }
    }

    @Test
    void fiftyHooksToUnreachableBrokersKeepAtMostTheBoundOfProducersCloseThemWhenDeletedAndLogQuietly() throws Exception {
        long before = producerThreads();
        Logger kafkaLog = (Logger) LoggerFactory.getLogger("org.apache.kafka");
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        kafkaLog.addAppender(logged);
        AtomicLong most = new AtomicLong();
        ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
        sampler.scheduleAtFixedRate(() -> most.accumulateAndGet(producerThreads() - before, Math::max), 0, 50, TimeUnit.MILLISECONDS);
        try {
            Api api = new Api(port);
            List<Integer> ports = deadPorts(HOOKS);
            List<String> hooks = new ArrayList<>();
            List<Api.Pair> chats = new ArrayList<>();
            for (int c = 0; c < HOOKS / 10; c++) {
                Api.Pair p = api.pair("kafka-unreachable-" + c);
                chats.add(p);
                for (int h = 0; h < 10; h++) {
                    Api.Response r = api.post("/api/chats/" + p.chat() + "/hooks", p.alice(),
                            Map.of("kind", "kafka", "bootstrapServers", "localhost:" + ports.get(c * 10 + h), "topic", "t"));
                    assertThat(r.status()).as(r.text()).isEqualTo(201);
                    hooks.add(r.body().get("hookId").asString());
                }
            }
            for (Api.Pair p : chats) {
                try (WsClient alice = WsClient.connectWelcomed(port, p.alice())) {
                    alice.sendMessage("k", p.chat(), "to nowhere");
                    assertThat(alice.answer("k").get("type").asString()).isEqualTo("accepted");
                }
            }
            // every hook's delivery tried (and failed) at least once: each needed a producer (a call
            // not made for want of one leaves no error of its own)
            await().atMost(Duration.ofSeconds(60)).until(() -> jdbc.queryForObject(
                    "SELECT count(*) FROM hook_deliveries WHERE hook_id = ANY (?::text[]) AND last_error IS NOT NULL",
                    Long.class, (Object) hooks.toArray(String[]::new)) == HOOKS);

            for (int i = 0; i < hooks.size(); i++) {
                assertThat(api.delete("/api/hooks/" + hooks.get(i), chats.get(i / 10).alice()).status()).isEqualTo(204);
            }
            boolean closed;
            try {
                await().atMost(Duration.ofSeconds(20)).until(() -> producerThreads() <= before);
                closed = true;
            }
            catch (ConditionTimeoutException stillOpen) {
                closed = false;
            }
            long left = producerThreads() - before;
            long warnings = logged.list.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.WARN)).count();
            boolean shut = closed;
            assertSoftly(s -> {
                s.assertThat(most.get()).as("producer threads alive at once").isLessThanOrEqualTo(maxProducers);
                s.assertThat(shut).as("every producer closed once its hooks were deleted (" + left + " left)").isTrue();
                s.assertThat(warnings).as("WARN lines of org.apache.kafka during the run").isLessThanOrEqualTo(5);
            });
        }
        finally {
            sampler.shutdownNow();
            kafkaLog.detachAppender(logged);
        }
    }
}
