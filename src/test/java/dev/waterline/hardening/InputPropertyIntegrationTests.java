package dev.waterline.hardening;

import java.util.List;

import dev.waterline.support.Api;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.quicktheories.WithQuickTheories;
import org.quicktheories.api.Pair;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Property-based tests of the input gate over arbitrary UTF-16 text, edges included (U+0000,
 * every kind of lone or reversed surrogate, noncharacters, BOM, C0 and C1 controls, line and
 * paragraph separators, quotes and backslashes, supplementary characters): every string sent in a
 * frame or a REST body is either refused {@code invalid} / 400, or stored and read back exactly
 * as it was sent, code unit for code unit. The oracle is written here, independently of the
 * server's gate: text may not hold U+0000 or an unpaired surrogate; an id additionally no control
 * character (category Cc). Strings go on the wire as JSON escapes, as an attacker can send them.
 */
@WaterlineIntegrationTest
class InputPropertyIntegrationTests implements WithQuickTheories {

    @LocalServerPort
    int port;

    @Autowired
    JdbcTemplate jdbc;

    Api api;
    Api.Pair pair;
    WsClient alice;
    int next;

    @BeforeEach
    void setUp() {
        api = new Api(port);
        pair = api.pair("prop-" + System.nanoTime());
        alice = WsClient.connectWelcomed(port, pair.alice());
    }

    @AfterEach
    void tearDown() {
        alice.close();
    }

    /** Arbitrary UTF-16 text, weighted toward the code units that break things. */
    static Gen<String> text(int maxUnits) {
        Gen<String> edge = Generate.pick(List.of("\u0000", "\uD800", "\uDBFF", "\uDC00", "\uDFFF", "\uFFFE", "\uFFFF",
                "\uFEFF", "\u202E", "\u0085", "\u007F", "\u001F", "\u0009", "\n", "\r", "\u2028", "\u2029", "\"", "\\", "/",
                "\uD83D\uDE00", "\uDE00\uD83D", "\uDBFF\uDFFF", "e\u0301", " ")).describedAs(InputPropertyIntegrationTests::show);
        Gen<String> anyUnit = Generate.characters(0, 0xFFFF).map((Character c) -> String.valueOf(c));
        Gen<String> ascii = Generate.characters(0x20, 0x7E).map((Character c) -> String.valueOf(c));
        Gen<String> supplementary = Generate.range(0x10000, 0x10FFFF).map(cp -> new String(Character.toChars(cp)));
        Gen<String> unit = Generate.frequency(List.of(Pair.of(6, ascii), Pair.of(3, edge), Pair.of(2, anyUnit),
                Pair.of(1, supplementary)));
        Gen<Integer> length = Generate.range(0, maxUnits);
        Gen<String> text = random -> {
            int n = length.generate(random);
            StringBuilder sb = new StringBuilder();
            while (sb.length() < n) {
                sb.append(unit.generate(random));
            }
            return sb.toString();
        };
        return text.describedAs(InputPropertyIntegrationTests::show);
    }

    static String show(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            out.append(c >= 0x20 && c < 0x7F ? String.valueOf(c) : String.format("\\u%04x", (int) c));
        }
        return out.append('"').toString();
    }

    /** The oracle: acceptable text holds no U+0000 and no unpaired surrogate. */
    static boolean isText(String s) {
        return s.codePoints().noneMatch(cp -> cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF));
    }

    /** An acceptable id: text of 1..max code units with no control character (Cc). */
    static boolean isId(String s, int max) {
        return !s.isEmpty() && s.length() <= max && isText(s)
                && s.codePoints().noneMatch(cp -> cp < 0x20 || (cp >= 0x7F && cp <= 0x9F));
    }

    /** s as a JSON string literal with everything outside printable ASCII escaped. */
    static String json(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\' || c < 0x20 || c >= 0x7F) {
                out.append(String.format("\\u%04x", (int) c));
            }
            else {
                out.append(c);
            }
        }
        return out.append('"').toString();
    }

    @Test
    void aSendBodyIsRefusedOrStoredAndServedExactlyAsSent() {
        qt().withExamples(300).forAll(text(40)).checkAssert(body -> {
            String corr = "body-" + next++;
            alice.sendRaw("{\"type\":\"send\",\"correlationId\":\"" + corr + "\",\"chatId\":\"" + pair.chat()
                    + "\",\"body\":" + json(body) + "}");
            JsonNode answer = alice.answer(corr);
            // an empty body only with attachments (PROTOCOL.md §9)
            if (!isText(body) || body.isEmpty()) {
                assertThat(answer.get("code").asString()).as(show(body)).isEqualTo("invalid");
                return;
            }
            assertThat(answer.get("type").asString()).as(show(body)).isEqualTo("accepted");
            String stored = jdbc.queryForObject("SELECT body FROM message_history WHERE message_id = ?", String.class,
                    answer.get("messageId").asString());
            assertThat(stored).as(show(body)).isEqualTo(body);
            JsonNode page = api.get("/api/chats/" + pair.chat() + "/messages?limit=1&since="
                    + previousOf(answer.get("seq").asLong()), pair.bob()).body().get("messages");
            assertThat(page.get(0).get("body").asString()).as(show(body)).isEqualTo(body);
        });
    }

    @Test
    void aCorrelationIdIsRefusedOrKeptExactlyAsSent() {
        qt().withExamples(200).forAll(text(70)).checkAssert(corr -> {
            String marker = "m" + next++;
            alice.sendRaw("{\"type\":\"send\",\"correlationId\":" + json(corr) + ",\"chatId\":\"" + pair.chat()
                    + "\",\"body\":\"" + marker + "\"}");
            if (!isId(corr, 64)) {
                JsonNode error = alice.next("error");
                assertThat(error.get("code").asString()).as(show(corr)).isEqualTo("invalid");
                return;
            }
            JsonNode answer = alice.answer(corr);
            String stored = jdbc.queryForObject("SELECT correlation_id FROM message_history WHERE message_id = ?",
                    String.class, answer.get("messageId").asString());
            assertThat(stored).as(show(corr)).isEqualTo(corr);
        });
    }

    @Test
    void aChatTitleAndAMemberIdAreRefusedOrStoredExactlyAsSent() {
        qt().withExamples(150).forAll(text(40), text(40)).checkAssert((title, member) -> {
            Api.Response r = api.postRaw("/api/chats", pair.alice(),
                    "{\"members\":[" + json(member) + "],\"title\":" + json(title) + "}");
            boolean acceptable = isText(title) && isId(member, 128) && !member.isBlank();
            if (!acceptable) {
                assertThat(r.status()).as(show(title) + " / " + show(member)).isEqualTo(400);
                assertThat(r.body().get("error").asString()).isEqualTo("invalid");
                return;
            }
            assertThat(r.status()).as(show(title) + " / " + show(member)).isEqualTo(201);
            JsonNode chat = api.get("/api/chats/" + r.body().get("chatId").asString(), pair.alice()).body();
            assertThat(chat.get("title").asString()).isEqualTo(title);
            assertThat(chat.get("members")).extracting(JsonNode::asString).contains(member);
            assertThat(jdbc.queryForObject("SELECT title FROM chats WHERE chat_id = ?", String.class,
                    r.body().get("chatId").asString())).isEqualTo(title);
        });
    }

    /** The messageId of the message just before {@code seq} in the pair's chat (null before the first). */
    private String previousOf(long seq) {
        List<String> ids = jdbc.queryForList("SELECT message_id FROM message_history WHERE chat_id = ? AND seq = ?",
                String.class, pair.chat(), seq - 1);
        return ids.isEmpty() ? "" : ids.getFirst();
    }
}
