package dev.waterline.ingest;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;

import dev.waterline.config.EmbeddedServers;
import dev.waterline.support.Api;
import dev.waterline.support.EmbeddedData;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A database that is reachable but refuses writes (a standby after a failover, a managed service
 * gone read-only on a full disk) is an outage, not bad input: every send is answered
 * {@code unavailable}, which clients retry, never {@code invalid}, and no batch is split looking
 * for a culprit. Once writes are back, the retried sends are accepted.
 */
@WaterlineIntegrationTest
@TestPropertySource(properties = {
        "waterline.embedded.database=read_only",
        "spring.data.redis.database=14"})
class ReadOnlyDatabaseIntegrationTests {

    @LocalServerPort
    int port;

    @Autowired
    MeterRegistry registry;

    static void admin(String sql) throws Exception {
        int pg = EmbeddedServers.postgresPort(EmbeddedData.DIR, true, "read_only");
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + pg + "/postgres", "postgres", "");
             Statement s = c.createStatement()) {
            s.execute(sql);
            s.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'read_only'");
        }
    }

    @Test
    void sendsToAReadOnlyDatabaseAreUnavailableNotInvalidAndAreAcceptedWhenRetriedLater() throws Exception {
        Api api = new Api(port);
        Api.Pair pair = api.pair("readonly");
        double poisoned = registry.get("waterline.batch.poisoned").tag("writer", "ingest").counter().count();
        try (WsClient alice = WsClient.connectWelcomed(port, pair.alice())) {
            alice.sendMessage("ro-0", pair.chat(), "before");
            assertThat(alice.answer("ro-0").get("type").asString()).isEqualTo("accepted");

            admin("ALTER DATABASE read_only SET default_transaction_read_only = on");
            try {
                List<String> codes = new java.util.ArrayList<>();
                for (int i = 1; i <= 5; i++) {
                    alice.sendMessage("ro-" + i, pair.chat(), "while read-only " + i);
                }
                for (int i = 1; i <= 5; i++) {
                    codes.add(alice.answer("ro-" + i).path("code").asString());
                }
                assertThat(codes).containsOnly("unavailable");
                assertThat(registry.get("waterline.batch.poisoned").tag("writer", "ingest").counter().count())
                        .as("no send was taken for the culprit").isEqualTo(poisoned);
            }
            finally {
                admin("ALTER DATABASE read_only RESET default_transaction_read_only");
            }
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20)).untilAsserted(() -> {
                alice.sendMessage("ro-1", pair.chat(), "while read-only 1");
                assertThat(alice.answer("ro-1").get("type").asString()).isEqualTo("accepted");
            });
        }
        assertThat(api.history(pair.bob(), pair.chat(), null, 100)).extracting(m -> m.get("body").asString())
                .containsExactly("before", "while read-only 1");
    }
}
