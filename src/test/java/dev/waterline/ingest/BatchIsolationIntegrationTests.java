package dev.waterline.ingest;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.Map;

import dev.waterline.support.Api;
import dev.waterline.support.WaterlineIntegrationTest;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Batch isolation, below the input gate: a send that PostgreSQL cannot store (here a U+0000,
 * which the gate would have refused at the door) fails only itself. Its batch's other sends are
 * committed, each chat's in its original order with gap-free seqs, and only it is answered
 * {@code invalid}; before, the whole batch was answered {@code unavailable}.
 */
@WaterlineIntegrationTest
class BatchIsolationIntegrationTests {

    @LocalServerPort
    int port;

    @Autowired
    Ingest ingest;

    @Autowired
    JdbcTemplate jdbc;

    @Autowired
    MeterRegistry registry;

    /** Where each send's answer went, by correlation id. */
    final Map<String, String> answers = new ConcurrentHashMap<>();

    SendRequest send(String sender, String corr, String chat, String body) {
        return new SendRequest(sender, corr, chat, body, new SendReply() {
            @Override
            public void accepted(String messageId, String chatId, long seq, String sentAt) {
                assertThat(answers.put(corr, "accepted:" + seq)).as("answered once").isNull();
            }

            @Override
            public void rejected(String code, String message) {
                assertThat(answers.put(corr, code)).as("answered once").isNull();
            }
        });
    }

    @Test
    void oneSendPostgresRefusesIsAnsweredInvalidAndTheRestOfItsBatchIsCommittedInOrder() {
        Api api = new Api(port);
        String alice = api.token("iso-alice");
        String chatA = api.createChat(alice, "iso-bob");
        String chatB = api.createChat(alice, "iso-carol");
        double poisonedBefore = registry.get("waterline.batch.poisoned").tag("writer", "ingest").counter().count();

        List<SendRequest> batch = new ArrayList<>();
        batch.add(send("iso-alice", "a1", chatA, "one"));
        batch.add(send("iso-alice", "bad-body", chatA, "poison\u0000"));
        batch.add(send("iso-alice", "a2", chatA, "two"));
        batch.add(send("iso-alice", "b1", chatB, "three"));
        batch.add(send("iso-alice", "bad-chat", chatB + "\u0000", "four"));
        batch.add(send("iso-alice", "a3", chatA, "five"));
        ingest.persist(batch);

        assertThat(answers).containsEntry("a1", "accepted:1").containsEntry("a2", "accepted:2")
                .containsEntry("a3", "accepted:3").containsEntry("b1", "accepted:1")
                .containsEntry("bad-body", "invalid").containsEntry("bad-chat", "invalid");
        assertThat(jdbc.queryForList("SELECT body FROM message_history WHERE chat_id = ? ORDER BY seq", String.class, chatA))
                .containsExactly("one", "two", "five");
        assertThat(jdbc.queryForList("SELECT body FROM message_history WHERE chat_id = ? ORDER BY seq", String.class, chatB))
                .containsExactly("three");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM outbox WHERE chat_id IN (?, ?)", Long.class, chatA, chatB))
                .as("one outbox row per recipient of each committed send").isEqualTo(4);
        assertThat(registry.get("waterline.batch.poisoned").tag("writer", "ingest").counter().count() - poisonedBefore)
                .isEqualTo(2);
    }
}
