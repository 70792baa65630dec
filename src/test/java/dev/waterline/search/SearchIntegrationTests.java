package dev.waterline.search;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import javax.sql.DataSource;

import dev.waterline.support.Api;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * PROTOCOL.md §10 search end to end, against the real PostgreSQL and its V15 index: what is found
 * (words, phrases, web-search syntax; an edit's new text, never its old, never a deleted message),
 * whose (the caller's chats only; a chat named that the caller is not in is 404), in what order
 * (newest first, paged by a cursor without gaps or repeats), with what snippet, and what is refused.
 */
@WaterlineIntegrationTest
class SearchIntegrationTests {

    @LocalServerPort
    int port;

    @Autowired
    MeterRegistry registry;

    @Autowired
    DataSource dataSource;

    Api api;

    /** A message of {@code prefix}-alice's into her chat with {@code prefix}-bob; the pair. */
    private Api.Pair pairWith(String prefix, String body) {
        api = new Api(port);
        Api.Pair p = api.pair(prefix);
        try (WsClient a = WsClient.connectWelcomed(port, p.alice())) {
            send(a, p.chat(), body);
        }
        return p;
    }

    /** Sends {@code bodies} in turn (each accepted before the next) into {@code chat}; their messageIds. */
    private static List<String> send(WsClient ws, String chat, String... bodies) {
        List<String> ids = new ArrayList<>();
        for (String body : bodies) {
            String corr = "s-" + System.nanoTime();
            ws.sendMessage(corr, chat, body);
            JsonNode answer = ws.answer(corr);
            assertThat(answer.get("type").asString()).as(answer.toString()).isEqualTo("accepted");
            ids.add(answer.get("messageId").asString());
        }
        return ids;
    }

    private Api.Response search(String token, String query) {
        return api.get("/api/search?" + query, token);
    }

    private static String q(String text) {
        return "q=" + URLEncoder.encode(text, StandardCharsets.UTF_8);
    }

    private static List<String> ids(Api.Response r) {
        assertThat(r.status()).as(r.text()).isEqualTo(200);
        List<String> out = new ArrayList<>();
        r.body().get("results").forEach(x -> out.add(x.get("messageId").asString()));
        return out;
    }

    @Test
    void findsAWordAPhraseAndWebSearchSyntax() {
        api = new Api(port);
        Api.Pair p = api.pair("search-syntax");
        try (WsClient a = WsClient.connectWelcomed(port, p.alice())) {
            List<String> m = send(a, p.chat(), "the quarterly report is late again", "a report on the quarterly numbers",
                    "lunch at noon, anyone?");
            assertThat(ids(search(p.alice(), q("lunch")))).containsExactly(m.get(2));
            assertThat(ids(search(p.alice(), q("REPORT")))).containsExactlyInAnyOrder(m.get(0), m.get(1));
            assertThat(ids(search(p.alice(), q("\"quarterly report\"")))).containsExactly(m.get(0));
            assertThat(ids(search(p.alice(), q("quarterly -late")))).containsExactly(m.get(1));
            assertThat(ids(search(p.alice(), q("noon or numbers")))).containsExactlyInAnyOrder(m.get(1), m.get(2));
            assertThat(ids(search(p.alice(), q("report lunch")))).as("every word must match").isEmpty();
            JsonNode first = search(p.alice(), q("lunch")).body().get("results").get(0);
            assertThat(first.get("chatId").asString()).isEqualTo(p.chat());
            assertThat(first.get("senderId").asString()).isEqualTo("search-syntax-alice");
            assertThat(first.get("seq").asLong()).isEqualTo(3);
            assertThat(Instant.parse(first.get("sentAt").asString())).isBefore(Instant.now().plusSeconds(1));
            assertThat(search(p.bob(), q("lunch")).body().get("results")).as("the other member finds it too").hasSize(1);
        }
    }

    @Test
    void searchesOnlyTheCallersChatsAndAChatIdNarrowsItToThatChat() {
        api = new Api(port);
        Api.Pair p = api.pair("search-scope");
        String mallory = api.token("search-scope-mallory");
        String alicesOther = api.createChat(p.alice(), "search-scope-carol");
        String mallorysOwn = api.createChat(mallory, "search-scope-dave");
        try (WsClient a = WsClient.connectWelcomed(port, p.alice());
             WsClient m = WsClient.connectWelcomed(port, mallory)) {
            String inPair = send(a, p.chat(), "pelican sighted").getFirst();
            String inOther = send(a, alicesOther, "another pelican").getFirst();
            String mallorys = send(m, mallorysOwn, "mallory's pelican").getFirst();

            assertThat(ids(search(p.alice(), q("pelican")))).containsExactly(inOther, inPair);
            assertThat(ids(search(mallory, q("pelican")))).containsExactly(mallorys);
            assertThat(ids(search(p.bob(), q("pelican")))).containsExactly(inPair);
            assertThat(ids(search(p.alice(), q("pelican") + "&chatId=" + p.chat()))).containsExactly(inPair);
            assertThat(ids(search(p.alice(), q("pelican") + "&chatId=" + alicesOther))).containsExactly(inOther);
        }
    }

    @Test
    void aChatIdTheCallerIsNotInIsNotFoundJustLikeAnUnknownOne() {
        Api.Pair p = pairWith("search-foreign", "secret heron");
        String mallory = api.token("search-foreign-mallory");
        Api.Response foreign = search(mallory, q("heron") + "&chatId=" + p.chat());
        Api.Response unknown = search(mallory, q("heron") + "&chatId=01NOSUCHCHAT0000000000000");
        assertThat(foreign.status()).isEqualTo(404);
        assertThat(foreign.body().get("error").asString()).isEqualTo("not_found");
        assertThat(foreign.text()).isEqualTo(unknown.text());
    }

    @Test
    void anEditedMessageIsFoundByItsNewTextAndNotByItsOld() {
        api = new Api(port);
        Api.Pair p = api.pair("search-edit");
        try (WsClient a = WsClient.connectWelcomed(port, p.alice())) {
            String id = send(a, p.chat(), "meet at the granary").getFirst();
            assertThat(ids(search(p.alice(), q("granary")))).containsExactly(id);
            a.send(Map.of("type", "edit", "correlationId", "search-edit-1", "chatId", p.chat(), "messageId", id,
                    "body", "meet at the lighthouse"));
            assertThat(a.answer("search-edit-1").get("type").asString()).isEqualTo("accepted");

            assertThat(ids(search(p.alice(), q("granary")))).as("the old text is not searched").isEmpty();
            Api.Response now = search(p.alice(), q("lighthouse"));
            assertThat(ids(now)).as("the message itself, not its edit entry").containsExactly(id);
            assertThat(now.body().get("results").get(0).get("seq").asLong()).isEqualTo(1);
        }
    }

    @Test
    void aDeletedMessageIsNeverFoundNorAreItsEdits() {
        api = new Api(port);
        Api.Pair p = api.pair("search-delete");
        try (WsClient a = WsClient.connectWelcomed(port, p.alice())) {
            List<String> m = send(a, p.chat(), "the walrus plan", "walrus again, kept");
            a.send(Map.of("type", "edit", "correlationId", "search-del-e", "chatId", p.chat(), "messageId", m.get(0),
                    "body", "the walrus plan, revised"));
            assertThat(a.answer("search-del-e").get("type").asString()).isEqualTo("accepted");
            a.send(Map.of("type", "delete", "correlationId", "search-del-d", "chatId", p.chat(), "messageId", m.get(0)));
            assertThat(a.answer("search-del-d").get("type").asString()).isEqualTo("accepted");

            assertThat(ids(search(p.alice(), q("walrus")))).containsExactly(m.get(1));
            assertThat(ids(search(p.alice(), q("revised")))).isEmpty();
            assertThat(ids(search(p.alice(), q("plan")))).isEmpty();
        }
    }

    @Test
    void resultsComeNewestFirstAndTheCursorPagesThroughThemWithoutGapsOrRepeats() {
        api = new Api(port);
        Api.Pair p = api.pair("search-pages");
        String second = api.createChat(p.alice(), "search-pages-carol");
        List<String> sent = new ArrayList<>();
        try (WsClient a = WsClient.connectWelcomed(port, p.alice())) {
            for (int i = 0; i < 23; i++) {
                sent.addAll(send(a, i % 3 == 0 ? second : p.chat(), "albatross number " + i));
                send(a, p.chat(), "filler without the bird " + i);
            }
        }
        List<String> newestFirst = new ArrayList<>(sent.reversed());
        List<String> paged = new ArrayList<>();
        String before = null;
        int pages = 0;
        do {
            Api.Response r = search(p.alice(), q("albatross") + "&limit=5" + (before == null ? "" : "&before=" + before));
            paged.addAll(ids(r));
            JsonNode next = r.body().get("next");
            before = next == null || next.isNull() ? null : next.asString();
            pages++;
            assertThat(r.body().get("results").size()).isEqualTo(before == null ? 3 : 5);
        } while (before != null && pages < 10);
        assertThat(pages).isEqualTo(5);
        assertThat(paged).isEqualTo(newestFirst);
        assertThat(new HashSet<>(paged)).hasSize(23);
        List<String> times = new ArrayList<>();
        search(p.alice(), q("albatross") + "&limit=100").body().get("results").forEach(x -> times.add(x.get("sentAt").asString()));
        assertThat(times).isSortedAccordingTo((x, y) -> Instant.parse(y).compareTo(Instant.parse(x)));
    }

    @Test
    void theSnippetIsPlainTextAndItsHighlightsAreTheMatchedWords() {
        api = new Api(port);
        Api.Pair p = api.pair("search-snippet");
        try (WsClient a = WsClient.connectWelcomed(port, p.alice())) {
            String body = "the quick brown fox jumps over the lazy dog, and the Fox laughs [[at]] nothing";
            send(a, p.chat(), body);
            JsonNode hit = search(p.alice(), q("fox")).body().get("results").get(0);
            String snippet = hit.get("snippet").asString();
            assertThat(snippet).as("a short message is its own snippet").isEqualTo(body);
            List<String> highlighted = new ArrayList<>();
            hit.get("highlights").forEach(h -> highlighted.add(snippet.substring(h.get(0).asInt(), h.get(1).asInt())));
            assertThat(highlighted).containsExactly("fox", "Fox");
        }
    }

    @Test
    void aLongMessagesSnippetIsAnExcerptAroundItsMatch() {
        api = new Api(port);
        Api.Pair p = api.pair("search-long");
        StringBuilder body = new StringBuilder();
        for (int i = 0; i < 60; i++) {
            body.append("filler").append(i).append(' ');
        }
        body.append("the heron stands still ");
        for (int i = 60; i < 120; i++) {
            body.append("filler").append(i).append(' ');
        }
        try (WsClient a = WsClient.connectWelcomed(port, p.alice())) {
            send(a, p.chat(), body.toString().strip());
            JsonNode hit = search(p.alice(), q("heron")).body().get("results").get(0);
            String snippet = hit.get("snippet").asString();
            assertThat(snippet).contains("heron").doesNotContain("filler0 ").hasSizeLessThan(body.length() / 2);
            JsonNode h = hit.get("highlights").get(0);
            assertThat(snippet.substring(h.get(0).asInt(), h.get(1).asInt())).isEqualTo("heron");
        }
    }

    @Test
    void aMissingBlankOversizedOrWordlessQueryIsInvalid() {
        api = new Api(port);
        String alice = api.token("search-badq-alice");
        for (String query : List.of("", "q=", "q=%20%20", q("x".repeat(257)), q("!!! ... ???"), q("-"))) {
            Api.Response r = search(alice, query);
            assertThat(r.status()).as(query).isEqualTo(400);
            assertThat(r.body().get("error").asString()).as(query).isEqualTo("invalid");
        }
        assertThat(search(alice, q("x".repeat(256))).status()).isEqualTo(200);
    }

    @Test
    void aLimitOutsideOneToAHundredOrACursorNotOfThisServerIsInvalid() {
        api = new Api(port);
        String alice = api.token("search-limit-alice");
        for (String bad : List.of("&limit=0", "&limit=101", "&limit=ten", "&limit=-1", "&before=garbage", "&before=",
                "&before=" + java.util.Base64.getUrlEncoder().encodeToString("1:0:chat".getBytes(StandardCharsets.UTF_8)))) {
            Api.Response r = search(alice, q("word") + bad);
            assertThat(r.status()).as(bad).isEqualTo(400);
            assertThat(r.body().get("error").asString()).as(bad).isEqualTo("invalid");
        }
        assertThat(search(alice, q("word") + "&limit=1").status()).isEqualTo(200);
        assertThat(search(alice, q("word") + "&limit=100").status()).isEqualTo(200);
    }

    @Test
    void aSearchStoppedByTheStatementTimeoutIsAnsweredUnavailableAndCounted() throws Exception {
        Api.Pair p = pairWith("search-timeout", "slow tortoise");
        double before = registry.counter("waterline.search.timeouts").count();
        CompletableFuture<Api.Response> waiting;
        try (Connection blocker = dataSource.getConnection()) {
            blocker.setAutoCommit(false);
            blocker.createStatement().execute("LOCK TABLE message_history IN ACCESS EXCLUSIVE MODE");
            waiting = CompletableFuture.supplyAsync(() -> new Api(port).get("/api/search?" + q("tortoise"), p.alice()));
            await().atMost(Duration.ofSeconds(10)).until(waiting::isDone);
            blocker.rollback();
        }
        Api.Response r = waiting.get();
        assertThat(r.status()).as(r.text()).isEqualTo(503);
        assertThat(r.body().get("error").asString()).isEqualTo("unavailable");
        assertThat(r.body().get("message").asString()).contains("2000 ms");
        assertThat(registry.counter("waterline.search.timeouts").count()).isEqualTo(before + 1);
        assertThat(ids(search(p.alice(), q("tortoise")))).as("and the next search, unhindered, is answered").hasSize(1);
    }

    @Test
    void theQuerysTextConditionIsTheIndexsExpressionSoTheIndexCanServeIt() throws Exception {
        pairWith("search-plan", "a zanzibarine word");
        StringBuilder plan = new StringBuilder();
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            // a test database is small enough for a sequential scan to win; what is checked is that the index can serve
            c.createStatement().execute("SET LOCAL enable_seqscan = off");
            try (var rs = c.createStatement().executeQuery("""
                    EXPLAIN SELECT message_id FROM message_history h
                    WHERE h.kind = 'text'
                      AND to_tsvector(waterline_search_config(), h.body) @@ websearch_to_tsquery(waterline_search_config(), 'zanzibarine')
                    """)) {
                while (rs.next()) {
                    plan.append(rs.getString(1)).append('\n');
                }
            }
            c.rollback();
        }
        assertThat(plan.toString()).contains("message_history_search");
        assertThat(new JdbcTemplate(dataSource).queryForObject("SELECT waterline_search_config()::text", String.class)).isEqualTo("simple");
    }
}
