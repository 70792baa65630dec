package dev.waterline.ingest;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.waterline.support.Api;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Many senders into two shared chats at once, with readers paging {@code since=} while they
 * write: I1 (no outbox row without history), I6 (accepted only after commit; a retried send
 * creates nothing) and I7 (per-chat seq gap-free and commit-ordered: a reader never skips).
 */
@WaterlineIntegrationTest
class ConcurrentSendInvariantsIntegrationTests {

    static final int SENDERS = 6;
    static final int MESSAGES_PER_SENDER = 60;
    static final int RETRIES_PER_SENDER = 12;

    @LocalServerPort
    int port;

    @Autowired
    JdbcTemplate jdbc;

    @Test
    void concurrentSendersAndReadersNeverSeeAGapOrADuplicateAndEveryAcceptedMessageIsAlreadyCommitted() throws Exception {
        Api api = new Api(port);
        List<String> users = new ArrayList<>();
        for (int i = 0; i < SENDERS; i++) {
            users.add("inv-sender-" + i);
        }
        String owner = api.token(users.get(0));
        String[] others = users.subList(1, SENDERS).toArray(String[]::new);
        String[] othersAndListener = new String[others.length + 1];
        System.arraycopy(others, 0, othersAndListener, 0, others.length);
        othersAndListener[others.length] = "inv-listener";
        String chatA = api.createChat(owner, othersAndListener);
        String chatB = api.createChat(owner, others);
        String reader = api.token("inv-listener");
        String readerB = api.token(users.get(1));

        AtomicBoolean writing = new AtomicBoolean(true);
        List<String> readerFailures = new CopyOnWriteArrayList<>();
        Map<String, String> acceptedIds = new ConcurrentHashMap<>();          // sender/corr -> messageId
        List<String> notYetVisibleWhenAccepted = new CopyOnWriteArrayList<>();
        List<String> retryMismatches = new CopyOnWriteArrayList<>();

        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<?>> readers = List.of(
                    pool.submit(() -> pageUntilDone(api, reader, chatA, writing, readerFailures)),
                    pool.submit(() -> pageUntilDone(api, reader, chatA, writing, readerFailures)),
                    pool.submit(() -> pageUntilDone(api, readerB, chatB, writing, readerFailures)));
            List<Future<?>> senders = new ArrayList<>();
            for (String user : users) {
                String token = api.token(user);
                senders.add(pool.submit(() -> {
                    try (WsClient ws = WsClient.connect(port, token).autoAck()) {
                        ws.next("welcome");
                        List<String> corrs = new ArrayList<>();
                        for (int i = 0; i < MESSAGES_PER_SENDER; i++) {
                            String corr = user + "-m" + i;
                            corrs.add(corr);
                            ws.sendMessage(corr, i % 2 == 0 ? chatA : chatB, "body " + corr);
                        }
                        List<String> retried = new ArrayList<>(corrs.subList(0, RETRIES_PER_SENDER));
                        for (String corr : retried) {
                            int i = corrs.indexOf(corr);
                            ws.sendMessage(corr, i % 2 == 0 ? chatA : chatB, "body " + corr);
                        }
                        for (String corr : corrs) {
                            JsonNode a = ws.answer(corr);
                            assertThat(a.get("type").asString()).as(a.toString()).isEqualTo("accepted");
                            String messageId = a.get("messageId").asString();
                            Integer visible = jdbc.queryForObject(
                                    "SELECT count(*) FROM message_history WHERE message_id = ?", Integer.class, messageId);
                            if (visible == null || visible != 1) {
                                notYetVisibleWhenAccepted.add(messageId);
                            }
                            acceptedIds.put(user + "/" + corr, messageId);
                        }
                        for (String corr : retried) {
                            JsonNode again = ws.answer(corr);
                            if (!"accepted".equals(again.get("type").asString())
                                    || !again.get("messageId").asString().equals(acceptedIds.get(user + "/" + corr))) {
                                retryMismatches.add(again.toString());
                            }
                        }
                    }
                    return null;
                }));
            }
            try {
                for (Future<?> f : senders) {
                    f.get(2, TimeUnit.MINUTES);
                }
            }
            finally {
                // Even when a sender fails, the readers must stop, or closing the pool waits forever.
                writing.set(false);
            }
            for (Future<?> f : readers) {
                f.get(1, TimeUnit.MINUTES);
            }
        }

        int total = SENDERS * MESSAGES_PER_SENDER;
        assertThat(readerFailures).isEmpty();
        assertThat(notYetVisibleWhenAccepted).as("accepted before commit").isEmpty();
        assertThat(retryMismatches).as("retried sends answered with another message").isEmpty();
        assertThat(acceptedIds).hasSize(total);
        assertThat(Set.copyOf(acceptedIds.values())).hasSize(total);

        for (String chat : List.of(chatA, chatB)) {
            List<Long> seqs = jdbc.queryForList("SELECT seq FROM message_history WHERE chat_id = ? ORDER BY seq", Long.class, chat);
            assertThat(seqs).hasSize(total / 2);
            for (int i = 0; i < seqs.size(); i++) {
                assertThat(seqs.get(i)).isEqualTo(i + 1L);
            }
            assertThat(jdbc.queryForObject("SELECT last_seq FROM chats WHERE chat_id = ?", Long.class, chat)).isEqualTo(total / 2L);
        }
        assertThat(jdbc.queryForObject("""
                SELECT count(*) FROM outbox o
                WHERE o.chat_id IN (?, ?)
                  AND NOT EXISTS (SELECT 1 FROM message_history h
                                  WHERE h.message_id = o.message_id AND h.chat_id = o.chat_id AND h.seq = o.seq)
                """, Long.class, chatA, chatB)).as("outbox rows without history (I1)").isZero();
        Map<String, Long> expectedOutbox = new HashMap<>();
        expectedOutbox.put(chatA, (long) (total / 2) * SENDERS);        // 7 members: 6 recipients each
        expectedOutbox.put(chatB, (long) (total / 2) * (SENDERS - 1));  // 6 members: 5 recipients each
        for (var e : expectedOutbox.entrySet()) {
            assertThat(jdbc.queryForObject("SELECT count(*) FROM outbox WHERE chat_id = ?", Long.class, e.getKey()))
                    .as("one outbox row per recipient of " + e.getKey()).isEqualTo(e.getValue());
        }
    }

    /** A client paging history as PROTOCOL.md §4 says, asserting it never skips a seq. */
    private static Void pageUntilDone(Api api, String token, String chat, AtomicBoolean writing, List<String> failures) {
        String since = null;
        long last = 0;
        boolean finalPass = false;
        while (true) {
            boolean stillWriting = writing.get();
            List<JsonNode> page = api.history(token, chat, since, 7);
            for (JsonNode m : page) {
                long seq = m.get("seq").asLong();
                if (seq != last + 1) {
                    failures.add("reader on " + chat + " saw seq " + seq + " after " + last);
                    return null;
                }
                last = seq;
                since = m.get("messageId").asString();
            }
            if (!stillWriting) {
                if (finalPass) {
                    return null;
                }
                finalPass = true;
            }
        }
    }
}
