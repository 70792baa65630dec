package dev.waterline.receipts;

import java.util.List;

import dev.waterline.support.Api;
import dev.waterline.support.RecordingSession;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A read receipt PostgreSQL cannot store fails only itself: the other receipts of its batch are
 * stored and pushed, and only its sender is told {@code invalid} (before, every sender of the
 * batch was told {@code unavailable}).
 */
@WaterlineIntegrationTest
class ReceiptIsolationIntegrationTests {

    @LocalServerPort
    int port;

    @Autowired
    Receipts receipts;

    @Autowired
    JdbcTemplate jdbc;

    @Test
    void aPoisonedReceiptFailsOnlyItselfAndTheOthersAreStored() {
        Api api = new Api(port);
        Api.Pair pair = api.pair("riso");
        try (WsClient alice = WsClient.connectWelcomed(port, pair.alice())) {
            for (String corr : List.of("riso-1", "riso-2")) {
                alice.sendMessage(corr, pair.chat(), corr);
                assertThat(alice.answer(corr).get("type").asString()).isEqualTo("accepted");
            }
        }
        RecordingSession bob = new RecordingSession("riso-bob");
        RecordingSession mallory = new RecordingSession("riso-mallory");

        receipts.commit(List.of(
                new ReadRequest(mallory, pair.chat() + "\u0000", 1),
                new ReadRequest(bob, pair.chat(), 2)));

        assertThat(mallory.frames()).singleElement().asString().contains("\"code\":\"invalid\"");
        assertThat(bob.frames()).as("bob's receipt was stored: nothing to tell him").isEmpty();
        assertThat(jdbc.queryForObject("SELECT seq FROM read_receipts WHERE chat_id = ? AND user_id = ?", Long.class,
                pair.chat(), "riso-bob")).isEqualTo(2);
    }
}
