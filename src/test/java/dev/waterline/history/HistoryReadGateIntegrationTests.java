package dev.waterline.history;

import java.sql.Connection;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import javax.sql.DataSource;

import dev.waterline.support.Api;
import dev.waterline.support.WaterlineIntegrationTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * REST reads take bounded turns at PostgreSQL, so a storm of resyncs (or of any REST calls)
 * cannot hold every pooled connection: with one turn, a page that cannot get it within max-wait
 * is answered 503 {@code unavailable}, as is a chat list asked meanwhile, and the page holding
 * the turn completes once PostgreSQL answers.
 */
@WaterlineIntegrationTest
@TestPropertySource(properties = {
        "waterline.api.max-concurrent-queries=1",
        "waterline.api.max-wait=300ms",
        "waterline.embedded.database=history_gate",
        "spring.data.redis.database=11"})
class HistoryReadGateIntegrationTests {

    @LocalServerPort
    int port;

    @Autowired
    DataSource dataSource;

    @Autowired
    JdbcTemplate jdbc;

    @Test
    void aHistoryReadBeyondTheConcurrencyLimitWaitsItsTurnAndIsRefusedUnavailableOnlyAfterMaxWait() throws Exception {
        Api api = new Api(port);
        String alice = api.token("gate-alice");
        String chat = api.createChat(alice, "gate-bob");
        String path = "/api/chats/" + chat + "/messages";

        CompletableFuture<Api.Response> holder;
        try (Connection blocker = dataSource.getConnection()) {
            blocker.setAutoCommit(false);
            blocker.createStatement().execute("LOCK TABLE message_history IN ACCESS EXCLUSIVE MODE");
            holder = CompletableFuture.supplyAsync(() -> api.get(path, alice));
            await().atMost(Duration.ofSeconds(10)).until(() -> jdbc.queryForObject(
                    "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'message_history'::regclass", Long.class) > 0);

            Api.Response refused = api.get(path, alice);
            assertThat(refused.status()).isEqualTo(503);
            assertThat(refused.body().get("error").asString()).isEqualTo("unavailable");
            Api.Response list = api.get("/api/chats", alice);
            assertThat(list.status()).as("the chat list waits for the same turns").isEqualTo(503);
            assertThat(holder).isNotDone();
            blocker.rollback();
        }
        Api.Response page = holder.get();
        assertThat(page.status()).isEqualTo(200);
        assertThat(page.body().get("messages").isArray()).isTrue();
        assertThat(api.get(path, alice).status()).as("the turn was given back").isEqualTo(200);
    }
}
