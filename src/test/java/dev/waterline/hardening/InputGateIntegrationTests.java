package dev.waterline.hardening;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.waterline.support.Api;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a probe found, as a client sees it: one client's bad text (an unpaired surrogate, a
 * U+0000, a control character in an id) is refused {@code invalid} before anything is queued,
 * stores nothing, and neither silences the chat's other members nor fails anyone else's sends.
 * Frames carrying such text are written here as raw JSON with escapes, as an attacker would send
 * them (the text itself cannot be encoded as UTF-8).
 */
@WaterlineIntegrationTest
class InputGateIntegrationTests {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @LocalServerPort
    int port;

    @Autowired
    JdbcTemplate jdbc;

    Api api;

    @BeforeEach
    void setUp() {
        api = new Api(port);
    }

    static String send(String correlationId, String chatId, String body) {
        return "{\"type\":\"send\",\"correlationId\":\"" + correlationId + "\",\"chatId\":\"" + chatId + "\",\"body\":\"" + body + "\"}";
    }

    @Test
    void anUnpairedSurrogateIsRefusedStoresNothingAndTheChatsOtherMembersKeepReceiving() {
        Api.Pair pair = api.pair("surrogate");
        try (WsClient alice = WsClient.connectWelcomed(port, pair.alice());
             WsClient bob = WsClient.connectWelcomed(port, pair.bob()).autoAck()) {
            alice.sendRaw(send("lone-1", pair.chat(), "x\\ud800y"));
            alice.sendRaw(send("lone-2", pair.chat(), "\\udc00"));
            alice.sendRaw(send("lone-3", pair.chat(), "reversed \\ude00\\ud83d pair"));
            for (String corr : List.of("lone-1", "lone-2", "lone-3")) {
                JsonNode answer = alice.answer(corr);
                assertThat(answer.get("type").asString()).isEqualTo("error");
                assertThat(answer.get("code").asString()).isEqualTo("invalid");
            }

            alice.sendMessage("after", pair.chat(), "still heard \uD83D\uDE00");
            assertThat(alice.answer("after").get("type").asString()).isEqualTo("accepted");
            JsonNode heard = bob.next("message");
            assertThat(heard.get("body").asString()).isEqualTo("still heard \uD83D\uDE00");
            bob.send(Map.of("type", "ping"));
            bob.next("pong");
            assertThat(bob.received()).filteredOn(f -> "message".equals(f.path("type").asString())).hasSize(1);
        }
        assertThat(api.history(pair.alice(), pair.chat(), null, 100)).extracting(m -> m.get("body").asString())
                .containsExactly("still heard \uD83D\uDE00");
    }

    @Test
    void aNulInBodyChatIdOrCorrelationIdIsRefusedBeforeItIsQueued() {
        Api.Pair pair = api.pair("nul");
        try (WsClient alice = WsClient.connectWelcomed(port, pair.alice())) {
            alice.sendRaw(send("nul-body", pair.chat(), "a\\u0000b"));
            alice.sendRaw(send("nul-chat", pair.chat() + "\\u0000", "hi"));
            for (String corr : List.of("nul-body", "nul-chat")) {
                assertThat(alice.answer(corr).get("code").asString()).isEqualTo("invalid");
            }
            alice.sendRaw(send("nul\\u0000corr", pair.chat(), "hi"));
            JsonNode noId = alice.next("error");
            assertThat(noId.get("code").asString()).isEqualTo("invalid");
            assertThat(noId.has("correlationId")).as("an id that is not acceptable text is not echoed").isFalse();
            alice.sendRaw(send("ctl-chat", pair.chat() + "\\u0007", "hi"));
            assertThat(alice.answer("ctl-chat").get("code").asString()).as("a control character in an id").isEqualTo("invalid");
            alice.sendRaw("{\"type\":\"read\",\"chatId\":\"" + pair.chat() + "\\u0000\",\"seq\":1}");
            assertThat(alice.next("error").get("code").asString()).isEqualTo("invalid");
            alice.sendRaw("{\"ty\\u0000pe\":\"ping\"}");
            assertThat(alice.next("error").get("code").asString()).as("a field name").isEqualTo("invalid");
            alice.send(Map.of("type", "ping"));
            alice.next("pong");
        }
        assertThat(jdbc.queryForObject("SELECT count(*) FROM message_history WHERE chat_id = ?", Long.class, pair.chat())).isZero();
    }

    @Test
    void aFloodOfPoisonFramesFromOneSocketFailsNoneOfABystandersSends() throws Exception {
        Api.Pair bystanders = api.pair("bystander");
        String mallory = api.token("poisoner-mallory");
        AtomicBoolean flooding = new AtomicBoolean(true);
        try (WsClient poisoner = WsClient.connectWelcomed(port, mallory);
             WsClient carol = WsClient.connectWelcomed(port, bystanders.alice())) {
            Thread flood = Thread.startVirtualThread(() -> {
                for (int i = 0; flooding.get() && i < 5_000; i++) {
                    // no membership needed: the bystanders' own chat id, poisoned
                    poisoner.sendRaw(send("p" + i, bystanders.chat() + "\\u0000", "x"));
                    poisoner.sendRaw(send("q" + i, bystanders.chat(), "x\\u0000"));
                }
            });
            List<String> answers = new ArrayList<>();
            for (int i = 0; i < 60; i++) {
                carol.sendMessage("by-" + i, bystanders.chat(), "message " + i);
            }
            for (int i = 0; i < 60; i++) {
                answers.add(carol.answer("by-" + i).get("type").asString());
            }
            flooding.set(false);
            flood.join(WAIT);
            assertThat(answers).as("every bystander send accepted").containsOnly("accepted").hasSize(60);
            assertThat(poisoner.received()).filteredOn(f -> "error".equals(f.path("type").asString()))
                    .extracting(f -> f.get("code").asString()).as("refused at the gate, before the rate is charged")
                    .containsOnly("invalid");
        }
        assertThat(api.history(bystanders.alice(), bystanders.chat(), null, 100)).hasSize(60);
    }

    @Test
    void badTextInARestBodyParameterOrPathIsA400WithTheProtocolsErrorBody() {
        String alice = api.token("rest-gate-alice");
        String chat = api.createChat(alice, "rest-gate-bob");
        List<Api.Response> refused = List.of(
                api.postRaw("/api/chats", alice, "{\"members\":[\"a\\u0000b\"]}"),
                api.postRaw("/api/chats", alice, "{\"members\":[\"bob\"],\"title\":\"x\\ud800\"}"),
                api.postRaw("/api/chats", alice, "{\"members\":[\"bell\\u0007\"]}"),
                api.postRaw("/api/chats", alice, "{\"members\":[\"bob\"],\"ti\\u0000tle\":\"t\"}"),
                api.postRaw("/api/chats/" + chat + "/members", alice, "{\"userId\":\"tab\\tbob\"}"),
                api.postRaw("/api/dev/tokens", null, "{\"userId\":\"a\\u0000\"}"),
                api.postRaw("/api/dev/tokens", null, "{\"userId\":\"\\ud800\"}"),
                api.get("/api/chats?after=%00", alice),
                api.get("/api/chats/" + chat + "/messages?since=%00", alice),
                api.get("/api/chats/" + chat + "%07/messages", alice));
        for (Api.Response r : refused) {
            assertThat(r.status()).as(String.valueOf(r.body())).isEqualTo(400);
            assertThat(r.body().get("error").asString()).isEqualTo("invalid");
            assertThat(r.body().get("message").asString()).isNotBlank();
        }
        assertThat(api.get("/api/chats/" + chat, alice).body().get("members")).hasSize(2);
    }
}
