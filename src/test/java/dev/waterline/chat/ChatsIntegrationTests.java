package dev.waterline.chat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.waterline.support.Api;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** PROTOCOL.md §2. Every test uses its own user ids: all tests share one database. */
@WaterlineIntegrationTest
class ChatsIntegrationTests {

    /** Well-formed but never minted by the server. */
    private static final String UNKNOWN_CHAT = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
    private static final int MAX_MEMBERS = 500;

    @LocalServerPort
    int port;

    Api api;

    @BeforeEach
    void setUp() {
        api = new Api(port);
    }

    @Test
    void creatingAChatAnswers201WithItsIdTitleAndMembersIncludingTheCaller() {
        String alice = api.token("ch-create-alice");

        Api.Response r = api.post("/api/chats", alice, Map.of("members", List.of("ch-create-bob"), "title", "plans"));

        assertThat(r.status()).isEqualTo(201);
        assertThat(r.body().get("chatId").isString()).isTrue();
        assertThat(r.body().get("chatId").asString()).isNotBlank();
        assertThat(r.body().get("title").asString()).isEqualTo("plans");
        assertThat(strings(r.body().get("members"))).containsExactlyInAnyOrder("ch-create-alice", "ch-create-bob");
    }

    @Test
    void theCallerIsAMemberEvenWhenNotListedAndDuplicatesCollapse() {
        String alice = api.token("ch-dup-alice");

        Api.Response r = api.post("/api/chats", alice,
                Map.of("members", List.of("ch-dup-bob", "ch-dup-bob", "ch-dup-carol", "ch-dup-alice")));
        Api.Response alone = api.post("/api/chats", alice, Map.of("members", List.of()));

        assertThat(r.status()).isEqualTo(201);
        assertThat(strings(r.body().get("members"))).containsExactlyInAnyOrder("ch-dup-alice", "ch-dup-bob", "ch-dup-carol");
        assertThat(alone.status()).isEqualTo(201);
        assertThat(strings(alone.body().get("members"))).containsExactly("ch-dup-alice");
        Api.Response read = api.get("/api/chats/" + id(r), alice);
        assertThat(strings(read.body().get("members"))).containsExactlyInAnyOrder("ch-dup-alice", "ch-dup-bob", "ch-dup-carol");
    }

    @Test
    void listingShowsOnlyTheCallersChatsWithTheirLastSeq() {
        String alice = api.token("ch-list-alice");
        String bob = api.token("ch-list-bob");
        String carol = api.token("ch-list-carol");
        String withBob = api.createChat(alice, "ch-list-bob");
        String aliceAlone = api.createChat(alice);
        String carolAndBob = api.createChat(carol, "ch-list-bob");
        try (WsClient ws = WsClient.connect(port, alice)) {
            ws.sendMessage("list-1", withBob, "one");
            assertThat(ws.answer("list-1").get("type").asString()).isEqualTo("accepted");
            ws.sendMessage("list-2", withBob, "two");
            assertThat(ws.answer("list-2").get("type").asString()).isEqualTo("accepted");
        }

        Api.Response r = api.get("/api/chats", alice);

        assertThat(r.status()).isEqualTo(200);
        List<JsonNode> chats = list(r.body().get("chats"));
        assertThat(chats).extracting(c -> c.get("chatId").asString()).containsExactlyInAnyOrder(withBob, aliceAlone);
        JsonNode first = chat(chats, withBob);
        assertThat(first.get("lastSeq").isIntegralNumber()).isTrue();
        assertThat(first.get("lastSeq").asLong()).isEqualTo(2);
        assertThat(first.has("title")).as("an untitled chat still carries the title key").isTrue();
        assertThat(first.get("title").isNull()).isTrue();
        assertThat(strings(first.get("members"))).containsExactlyInAnyOrder("ch-list-alice", "ch-list-bob");
        assertThat(chat(chats, aliceAlone).get("lastSeq").asLong()).isZero();
        assertThat(list(api.get("/api/chats", bob).body().get("chats")))
                .extracting(c -> c.get("chatId").asString()).containsExactlyInAnyOrder(withBob, carolAndBob);
    }

    @Test
    void readingOneChatIncludesTheMembersReadSeq() {
        String alice = api.token("ch-read-alice");
        String bob = api.token("ch-read-bob");
        String chatId = api.createChat(alice, "ch-read-bob");

        Api.Response fresh = api.get("/api/chats/" + chatId, bob);
        assertThat(fresh.status()).isEqualTo(200);
        assertThat(fresh.body().get("chatId").asString()).isEqualTo(chatId);
        assertThat(fresh.body().get("lastSeq").asLong()).isZero();
        assertThat(fresh.body().get("readSeq").isObject()).isTrue();

        try (WsClient a = WsClient.connect(port, alice); WsClient b = WsClient.connect(port, bob)) {
            b.next("welcome");
            a.sendMessage("read-1", chatId, "hello");
            assertThat(a.answer("read-1").get("seq").asLong()).isEqualTo(1);
            b.send(Map.of("type", "read", "chatId", chatId, "seq", 1));

            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                JsonNode readSeq = api.get("/api/chats/" + chatId, alice).body().get("readSeq");
                assertThat(readSeq.path("ch-read-bob").asLong()).isEqualTo(1);
            });
        }
        assertThat(api.get("/api/chats/" + chatId, alice).body().get("lastSeq").asLong()).isEqualTo(1);
    }

    @Test
    void aChatOfOthersIsIndistinguishableFromAnUnknownChat() {
        String alice = api.token("ch-hidden-alice");
        String mallory = api.token("ch-hidden-mallory");
        String chatId = api.createChat(alice, "ch-hidden-bob");
        Map<String, String> dave = Map.of("userId", "ch-hidden-dave");

        List<Api.Response> ofOthers = List.of(
                api.get("/api/chats/" + chatId, mallory),
                api.post("/api/chats/" + chatId + "/members", mallory, dave),
                api.get("/api/chats/" + chatId + "/messages", mallory));
        List<Api.Response> unknown = List.of(
                api.get("/api/chats/" + UNKNOWN_CHAT, mallory),
                api.post("/api/chats/" + UNKNOWN_CHAT + "/members", mallory, dave),
                api.get("/api/chats/" + UNKNOWN_CHAT + "/messages", mallory));

        for (int i = 0; i < ofOthers.size(); i++) {
            assertThat(ofOthers.get(i).status()).as("endpoint %d, a chat of others", i).isEqualTo(404);
            assertThat(unknown.get(i).status()).as("endpoint %d, an unknown chat", i).isEqualTo(404);
            assertThat(ofOthers.get(i).body().get("error").asString()).isEqualTo("not_found");
            assertThat(ofOthers.get(i).body()).as("endpoint %d", i).isEqualTo(unknown.get(i).body());
        }
        assertThat(strings(api.get("/api/chats/" + chatId, alice).body().get("members")))
                .as("the refused addition changed nothing").doesNotContain("ch-hidden-dave", "ch-hidden-mallory");
    }

    @Test
    void aMemberAddsAMemberWhoThenSeesTheChat() {
        String alice = api.token("ch-add-alice");
        String dave = api.token("ch-add-dave");
        String chatId = api.createChat(alice, "ch-add-bob");
        assertThat(api.get("/api/chats/" + chatId, dave).status()).isEqualTo(404);

        Api.Response r = api.post("/api/chats/" + chatId + "/members", alice, Map.of("userId", "ch-add-dave"));

        assertThat(r.status()).isEqualTo(200);
        assertThat(r.body().get("chatId").asString()).isEqualTo(chatId);
        assertThat(strings(r.body().get("members"))).containsExactlyInAnyOrder("ch-add-alice", "ch-add-bob", "ch-add-dave");
        assertThat(api.get("/api/chats/" + chatId, dave).status()).isEqualTo(200);
        assertThat(list(api.get("/api/chats", dave).body().get("chats")))
                .extracting(c -> c.get("chatId").asString()).contains(chatId);
    }

    @Test
    void addingAnExistingMemberChangesNothing() {
        String alice = api.token("ch-again-alice");
        String chatId = api.createChat(alice, "ch-again-bob");

        Api.Response r = api.post("/api/chats/" + chatId + "/members", alice, Map.of("userId", "ch-again-bob"));

        assertThat(r.status()).isEqualTo(200);
        assertThat(strings(r.body().get("members"))).containsExactlyInAnyOrder("ch-again-alice", "ch-again-bob");
    }

    @Test
    void onlyMembersMayAddMembers() {
        String alice = api.token("ch-only-alice");
        String mallory = api.token("ch-only-mallory");
        String chatId = api.createChat(alice, "ch-only-bob");

        Api.Response r = api.post("/api/chats/" + chatId + "/members", mallory, Map.of("userId", "ch-only-mallory"));

        assertThat(r.status()).isEqualTo(404);
        assertThat(api.get("/api/chats/" + chatId, mallory).status()).isEqualTo(404);
        assertThat(strings(api.get("/api/chats/" + chatId, alice).body().get("members")))
                .containsExactlyInAnyOrder("ch-only-alice", "ch-only-bob");
    }

    @Test
    void creatingAChatOfMoreThanMaxMembersIsRefused() {
        String alice = api.token("ch-capc-alice");
        int chatsBefore = api.get("/api/chats", alice).body().get("chats").size();

        Api.Response tooMany = api.post("/api/chats", alice, Map.of("members", others("ch-capc-m", MAX_MEMBERS)));
        Api.Response atCap = api.post("/api/chats", alice, Map.of("members", others("ch-capc-m", MAX_MEMBERS - 1)));

        assertThat(tooMany.status()).isEqualTo(400);
        assertThat(tooMany.body().get("error").asString()).isEqualTo("invalid");
        assertThat(atCap.status()).isEqualTo(201);
        assertThat(atCap.body().get("members").size()).isEqualTo(MAX_MEMBERS);
        assertThat(api.get("/api/chats", alice).body().get("chats").size()).as("only the chat at the cap was created")
                .isEqualTo(chatsBefore + 1);
    }

    @Test
    void addingAMemberPastMaxMembersIsRefused() {
        String alice = api.token("ch-capa-alice");
        String chatId = api.createChat(alice, others("ch-capa-m", MAX_MEMBERS - 1).toArray(String[]::new));

        Api.Response r = api.post("/api/chats/" + chatId + "/members", alice, Map.of("userId", "ch-capa-one-too-many"));
        Api.Response existing = api.post("/api/chats/" + chatId + "/members", alice, Map.of("userId", "ch-capa-m0"));

        assertThat(r.status()).isEqualTo(400);
        assertThat(r.body().get("error").asString()).isEqualTo("invalid");
        assertThat(existing.status()).as("re-adding a member does not grow the chat").isEqualTo(200);
        JsonNode members = api.get("/api/chats/" + chatId, alice).body().get("members");
        assertThat(members.size()).isEqualTo(MAX_MEMBERS);
        assertThat(strings(members)).doesNotContain("ch-capa-one-too-many");
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "{\"members\": [",
            "",
            "[]",
            "{}",
            "{\"title\": \"no members\"}",
            "{\"members\": null}",
            "{\"members\": \"bob\"}",
            "{\"members\": [1]}",
            "{\"members\": [\"bob\", {\"id\": \"carol\"}]}",
            "{\"members\": [\"bob\"], \"title\": 5}",
            "{\"members\": [\"bob\"], \"title\": [\"t\"]}"})
    void aMalformedChatIsRefusedAsInvalid(String body) {
        String alice = api.token("ch-bad-alice");

        assertInvalid(api.postRaw("/api/chats", alice, body));
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "{\"userId\": ",
            "",
            "\"ch-badadd-dave\"",
            "{}",
            "{\"userId\": null}",
            "{\"userId\": 7}",
            "{\"userId\": [\"ch-badadd-dave\"]}",
            "{\"userId\": \"\"}"})
    void aMalformedMemberAdditionIsRefusedAsInvalid(String body) {
        String alice = api.token("ch-badadd-alice");
        String chatId = api.createChat(alice, "ch-badadd-bob");

        assertInvalid(api.postRaw("/api/chats/" + chatId + "/members", alice, body));
        assertThat(api.get("/api/chats/" + chatId, alice).body().get("members").size()).isEqualTo(2);
    }

    private static void assertInvalid(Api.Response r) {
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.body()).isNotNull();
        assertThat(r.body().get("error").asString()).isEqualTo("invalid");
        assertThat(r.body().get("message").isString()).isTrue();
        assertThat(r.body().get("message").asString()).isNotBlank();
    }

    private static List<String> others(String prefix, int n) {
        List<String> ids = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            ids.add(prefix + i);
        }
        return ids;
    }

    private static String id(Api.Response created) {
        return created.body().get("chatId").asString();
    }

    private static JsonNode chat(List<JsonNode> chats, String chatId) {
        return chats.stream().filter(c -> chatId.equals(c.get("chatId").asString())).findFirst().orElseThrow();
    }

    private static List<JsonNode> list(JsonNode array) {
        assertThat(array.isArray()).isTrue();
        List<JsonNode> out = new ArrayList<>();
        array.forEach(out::add);
        return out;
    }

    private static List<String> strings(JsonNode array) {
        return list(array).stream().map(JsonNode::asString).toList();
    }
}
