package dev.waterline.hooks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import dev.waterline.support.Api;
import dev.waterline.support.HookReceiver;
import dev.waterline.support.WsClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * PROTOCOL.md §7 against a real HTTP receiver in the test: what is sent (payload, key, attempt,
 * signature, the Host it was addressed to), retries, Retry-After, dead letters and replay, the
 * breaker's one probe among twenty workers, a hanging target's bulkhead, an abandoned claim, the
 * offline nudge.
 */
@HooksTestContext
class HooksHttpIntegrationTests {

    static final Duration WAIT = Duration.ofSeconds(30);

    @LocalServerPort
    int port;

    @Autowired
    JdbcTemplate jdbc;

    @Autowired
    HookProperties properties;

    Api api;
    HookReceiver receiver;

    @BeforeEach
    void setUp() {
        api = new Api(port);
        receiver = new HookReceiver();
    }

    @AfterEach
    void tearDown() {
        receiver.close();
    }

    String createHook(String token, String chat, Map<String, Object> body) {
        Api.Response r = api.post("/api/chats/" + chat + "/hooks", token, body);
        assertThat(r.status()).as(r.text()).isEqualTo(201);
        return r.body().get("hookId").asString();
    }

    String httpHook(Api.Pair p, String secret) {
        return secret == null ? createHook(p.alice(), p.chat(), Map.of("kind", "http", "url", receiver.url("/hook")))
                : createHook(p.alice(), p.chat(), Map.of("kind", "http", "url", receiver.url("/hook"), "secret", secret));
    }

    /** Sends {@code n} messages as alice and returns their accepted frames. */
    static List<JsonNode> send(WsClient ws, String chat, String prefix, int n) {
        List<JsonNode> accepted = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ws.sendMessage(prefix + i, chat, "body " + prefix + i);
        }
        for (int i = 0; i < n; i++) {
            JsonNode a = ws.answer(prefix + i);
            assertThat(a.get("type").asString()).as(a.toString()).isEqualTo("accepted");
            accepted.add(a);
        }
        return accepted;
    }

    JsonNode hook(String token, String hookId) {
        Api.Response r = api.get("/api/hooks/" + hookId, token);
        assertThat(r.status()).as(r.text()).isEqualTo(200);
        return r.body();
    }

    static String hmac(String secret, String text) throws Exception {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        return HexFormat.of().formatHex(mac.doFinal(text.getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void aStreamsOpeningMessageIsPostedAsKindStreamWithItsStreamIdTitleAndSender() {
        Api.Pair p = api.pair("hk-stream");
        String hookId = httpHook(p, null);
        Api.Response opened = api.post("/api/chats/" + p.chat() + "/streams", p.alice(), Map.of("title", "the reply"));
        assertThat(opened.status()).as(opened.text()).isEqualTo(201);
        String streamId = opened.body().get("streamId").asString();
        String messageId = opened.body().get("messageId").asString();

        await().atMost(WAIT).until(() -> !receiver.requestsFor(hookId + ":" + messageId).isEmpty());
        JsonNode body = receiver.requestsFor(hookId + ":" + messageId).getFirst().json();
        assertThat(body.get("event").asString()).isEqualTo("message");
        assertThat(body.get("kind").asString()).isEqualTo("stream");
        assertThat(body.get("streamId").asString()).isEqualTo(streamId);
        assertThat(body.get("messageId").asString()).isEqualTo(messageId);
        assertThat(body.get("seq").asLong()).isEqualTo(opened.body().get("seq").asLong());
        assertThat(body.get("chatId").asString()).isEqualTo(p.chat());
        assertThat(body.get("senderId").asString()).isEqualTo("hk-stream-alice");
        assertThat(body.get("body").asString()).isEqualTo("the reply");
        assertThat(body.get("correlationId").asString()).isNotBlank();
    }

    @Test
    void editsReactionsAndDeletesArePostedLikeMessagesAndADeleteErasesTheTextOfDeliveriesStillWaiting() {
        Api.Pair p = api.pair("hk-entries");
        // the target refuses for now (500): the message's delivery stays pending, its text in the payload
        java.util.concurrent.atomic.AtomicBoolean accept = new java.util.concurrent.atomic.AtomicBoolean(false);
        receiver.respond((r, before) -> HookReceiver.Answer.status(accept.get() || !r.body().contains("a secret plan") ? 200 : 500));
        String hookId = httpHook(p, null);
        try (WsClient alice = WsClient.connectWelcomed(port, p.alice())) {
            alice.sendMessage("hk-m", p.chat(), "a secret plan");
            String id = alice.answer("hk-m").get("messageId").asString();
            alice.send(Map.of("type", "react", "correlationId", "hk-r", "chatId", p.chat(), "messageId", id, "emoji", "👀"));
            String reaction = alice.answer("hk-r").get("messageId").asString();
            await().atMost(WAIT).until(() -> !receiver.requestsFor(hookId + ":" + reaction).isEmpty());
            JsonNode r = receiver.requestsFor(hookId + ":" + reaction).getFirst().json();
            assertThat(r.get("kind").asString()).isEqualTo("reaction");
            assertThat(r.get("targetId").asString()).isEqualTo(id);
            assertThat(r.get("emoji").asString()).isEqualTo("👀");
            assertThat(r.get("on").asBoolean()).isTrue();

            alice.send(Map.of("type", "delete", "correlationId", "hk-d", "chatId", p.chat(), "messageId", id));
            String delete = alice.answer("hk-d").get("messageId").asString();
            accept.set(true);
            await().atMost(WAIT).until(() -> !receiver.requestsFor(hookId + ":" + delete).isEmpty());
            assertThat(receiver.requestsFor(hookId + ":" + delete).getFirst().json().get("targetId").asString()).isEqualTo(id);
            assertThat(jdbc.queryForObject("SELECT count(*) FROM hook_deliveries WHERE payload LIKE '%secret plan%'", Long.class))
                    .isZero();
            await().atMost(WAIT).until(() -> receiver.requestsFor(hookId + ":" + id).stream()
                    .anyMatch(x -> x.json().get("body").asString().isEmpty()));
        }
    }

    @Test
    void everyMessageAcceptedAfterTheHookIsCreatedIsPostedWithItsPayloadKeyAttemptAndAVerifiableSignature() throws Exception {
        Api.Pair p = api.pair("hk-payload");
        try (WsClient alice = WsClient.connectWelcomed(port, p.alice())) {
            JsonNode before = send(alice, p.chat(), "before", 1).getFirst();
            String hookId = httpHook(p, "s3cret-key");
            List<JsonNode> accepted = send(alice, p.chat(), "after", 3);

            await().atMost(WAIT).until(() -> receiver.requests().size() >= 3);
            List<HookReceiver.Request> got = receiver.requests();
            assertThat(got).hasSize(3);
            assertThat(got).noneMatch(r -> r.body().contains(before.get("messageId").asString()));
            for (JsonNode a : accepted) {
                String messageId = a.get("messageId").asString();
                HookReceiver.Request r = got.stream().filter(x -> x.json().get("messageId").asString().equals(messageId)).findFirst().orElseThrow();
                assertThat(r.method()).isEqualTo("POST");
                assertThat(r.path()).isEqualTo("/hook");
                assertThat(r.header("Content-Type")).startsWith("application/json");
                assertThat(r.header("Host")).isEqualTo("localhost:" + receiver.port());
                assertThat(r.key()).isEqualTo(hookId + ":" + messageId);
                assertThat(r.header("Waterline-Attempt")).isEqualTo("1");
                JsonNode body = r.json();
                assertThat(body.get("hookId").asString()).isEqualTo(hookId);
                assertThat(body.get("event").asString()).isEqualTo("message");
                assertThat(body.get("chatId").asString()).isEqualTo(p.chat());
                assertThat(body.get("seq").asLong()).isEqualTo(a.get("seq").asLong());
                assertThat(body.get("senderId").asString()).isEqualTo("hk-payload-alice");
                assertThat(body.get("correlationId").asString()).isEqualTo(a.get("correlationId").asString());
                assertThat(body.get("kind").asString()).isEqualTo("text");
                assertThat(body.get("body").asString()).isEqualTo("body " + a.get("correlationId").asString());
                assertThat(body.get("sentAt").asString()).isEqualTo(a.get("sentAt").asString());
                assertThat(body.get("streamId").isNull()).as(r.body()).isTrue();

                String signature = r.header("Waterline-Signature");
                assertThat(signature).matches("t=\\d+,v1=[0-9a-f]{64}");
                String t = signature.substring(2, signature.indexOf(','));
                assertThat(Math.abs(Long.parseLong(t) - Instant.now().getEpochSecond())).isLessThan(300);
                assertThat(signature.substring(signature.indexOf("v1=") + 3)).isEqualTo(hmac("s3cret-key", t + "." + r.body()));
                assertThat(hmac("another-key", t + "." + r.body())).isNotEqualTo(signature.substring(signature.indexOf("v1=") + 3));
            }
            await().atMost(WAIT).until(() -> hook(p.alice(), hookId).get("pending").asLong() == 0);
            JsonNode h = hook(p.alice(), hookId);
            assertThat(h.get("breaker").asString()).isEqualTo("closed");
            assertThat(h.get("dead").asLong()).isZero();
            String metrics = api.get("/actuator/prometheus", null).text();
            assertThat(metrics).contains("waterline_hook_deliveries_total{kind=\"http\",outcome=\"ok\"}")
                    .contains("waterline_hook_backlog").contains("waterline_hook_oldest_age_seconds");
        }
    }

    @Test
    void aHookIsAnsweredWithoutItsSecretAndOnlyToTheChatsMembers() {
        Api.Pair p = api.pair("hk-members");
        String stranger = api.token("hk-members-stranger");
        Api.Response created = api.post("/api/chats/" + p.chat() + "/hooks", p.alice(),
                Map.of("kind", "http", "url", receiver.url("/x"), "secret", "never-echo-me", "events", List.of("message", "offline")));
        assertThat(created.status()).isEqualTo(201);
        assertThat(created.text()).doesNotContain("never-echo-me");
        JsonNode h = created.body();
        String hookId = h.get("hookId").asString();
        assertThat(h.get("chatId").asString()).isEqualTo(p.chat());
        assertThat(h.get("kind").asString()).isEqualTo("http");
        assertThat(h.get("target").asString()).isEqualTo(receiver.url("/x"));
        assertThat(h.get("hasSecret").asBoolean()).isTrue();
        assertThat(h.get("events").toString()).isEqualTo("[\"message\",\"offline\"]");

        Api.Response list = api.get("/api/chats/" + p.chat() + "/hooks", p.bob());
        assertThat(list.status()).isEqualTo(200);
        assertThat(list.body().get("hooks")).hasSize(1);
        assertThat(list.text()).doesNotContain("never-echo-me");
        assertThat(api.get("/api/hooks/" + hookId, p.bob()).text()).doesNotContain("never-echo-me");

        assertThat(api.get("/api/chats/" + p.chat() + "/hooks", stranger).status()).isEqualTo(404);
        assertThat(api.post("/api/chats/" + p.chat() + "/hooks", stranger, Map.of("kind", "http", "url", receiver.url("/x"))).status())
                .isEqualTo(404);
        assertThat(api.get("/api/hooks/" + hookId, stranger).status()).isEqualTo(404);
        assertThat(api.get("/api/hooks/" + hookId + "/dead", stranger).status()).isEqualTo(404);
        assertThat(api.post("/api/hooks/" + hookId + "/dead/replay", stranger, Map.of()).status()).isEqualTo(404);
        assertThat(api.delete("/api/hooks/" + hookId, stranger).status()).isEqualTo(404);
        assertThat(api.get("/api/hooks/01ARZ3NDEKTSV4RRFFQ69G5FAV", p.alice()).status()).isEqualTo(404);
        assertThat(api.get("/api/hooks/" + hookId, p.alice()).status()).isEqualTo(200);
    }

    @Test
    void aRedisHooksPasswordAndEveryOtherCredentialIsMaskedInEveryAnswerAndStoredAsGiven() {
        Api.Pair p = api.pair("hk-mask");
        List<Map<String, Object>> hooks = List.of(
                Map.of("kind", "redis", "uri", "redis://secret@localhost:6379", "stream", "s"),
                Map.of("kind", "redis", "uri", "redis://default:secret@localhost:6379/2", "stream", "s"),
                Map.of("kind", "amqp", "uri", "amqp://guest:secret@localhost:5672/?auth_token=secret", "exchange", "x", "routingKey", "k"),
                Map.of("kind", "mqtt", "uri", "mqtt://user:secret@localhost:1883", "topic", "t"),
                Map.of("kind", "nats", "url", "nats://secret@localhost:4222", "subject", "s"),
                Map.of("kind", "http", "url", receiver.url("/x?token=secret&page=2")));
        List<String> ids = new ArrayList<>();
        for (Map<String, Object> body : hooks) {
            Api.Response created = api.post("/api/chats/" + p.chat() + "/hooks", p.alice(), body);
            assertThat(created.status()).as(created.text()).isEqualTo(201);
            assertThat(created.text()).as("POST " + body).doesNotContain("secret").contains("***");
            ids.add(created.body().get("hookId").asString());
        }
        Api.Response list = api.get("/api/chats/" + p.chat() + "/hooks", p.bob());
        assertThat(list.body().get("hooks")).hasSize(hooks.size());
        assertThat(list.text()).as("GET the list").doesNotContain("secret");
        for (String id : ids) {
            Api.Response one = api.get("/api/hooks/" + id, p.bob());
            assertThat(one.status()).isEqualTo(200);
            assertThat(one.text()).as("GET " + id).doesNotContain("secret").contains("***");
        }
        assertThat(api.get("/api/hooks/" + ids.get(0), p.bob()).body().get("uri").asString()).isEqualTo("redis://***@localhost:6379");
        // the sink needs the credentials: only the answers are masked
        assertThat(jdbc.queryForObject("SELECT target->>'uri' FROM hooks WHERE hook_id = ?", String.class, ids.get(0)))
                .isEqualTo("redis://secret@localhost:6379");
    }

    @Test
    void malformedHooksAreRefusedWithInvalid() {
        Api.Pair p = api.pair("hk-invalid");
        String url = receiver.url("/x");
        List<Map<String, Object>> bad = List.of(
                Map.of("url", url),
                Map.of("kind", "smtp", "url", url),
                Map.of("kind", "http"),
                Map.of("kind", "http", "url", "ftp://localhost/x"),
                Map.of("kind", "http", "url", "not a url"),
                Map.of("kind", "http", "url", "http://user:pw@localhost:1/x"),
                Map.of("kind", "http", "url", url, "events", List.of("nope")),
                Map.of("kind", "http", "url", url, "events", List.of()),
                Map.of("kind", "http", "url", url, "secret", ""),
                Map.of("kind", "http", "url", 42),
                Map.of("kind", "amqp", "uri", "amqp://localhost", "exchange", "x", "routingKey", "k", "secret", "s"),
                Map.of("kind", "mqtt", "uri", "mqtt://localhost", "topic", "a/#"),
                Map.of("kind", "nats", "url", "nats://localhost", "subject", "a.*"),
                Map.of("kind", "kafka", "bootstrapServers", "localhost", "topic", "t"),
                Map.of("kind", "kafka", "bootstrapServers", "localhost:9092", "topic", "bad topic"),
                Map.of("kind", "redis", "uri", "redis://localhost"));
        for (Map<String, Object> body : bad) {
            Api.Response r = api.post("/api/chats/" + p.chat() + "/hooks", p.alice(), body);
            assertThat(r.status()).as(body + " → " + r.text()).isEqualTo(400);
            assertThat(r.body().get("error").asString()).isEqualTo("invalid");
        }
        assertThat(api.postRaw("/api/chats/" + p.chat() + "/hooks", p.alice(), "{not json").status()).isEqualTo(400);
        assertThat(api.get("/api/chats/" + p.chat() + "/hooks", p.alice()).body().get("hooks")).isEmpty();
        assertThat(api.get("/api/hooks/x/dead?limit=0", p.alice()).status()).isEqualTo(400);
    }

    @Test
    void failuresAreRetriedWithTheSameKeyAndBodyUntilTheTargetTakesIt() {
        receiver.respond((r, before) -> HookReceiver.Answer.status(before < 2 ? 500 : 200));
        Api.Pair p = api.pair("hk-retry");
        try (WsClient alice = WsClient.connectWelcomed(port, p.alice())) {
            String hookId = httpHook(p, null);
            String messageId = send(alice, p.chat(), "m", 1).getFirst().get("messageId").asString();
            String key = hookId + ":" + messageId;

            await().atMost(WAIT).until(() -> hook(p.alice(), hookId).get("pending").asLong() == 0);
            List<HookReceiver.Request> attempts = receiver.requestsFor(key);
            assertThat(attempts).hasSize(3);
            assertThat(attempts).extracting(r -> r.header("Waterline-Attempt")).containsExactly("1", "2", "3");
            assertThat(attempts).extracting(HookReceiver.Request::body).containsOnly(attempts.getFirst().body());
            // backoff-base 200 ms with equal jitter: never sooner than half of it
            for (int i = 1; i < attempts.size(); i++) {
                assertThat(attempts.get(i).arrivedNanos() - attempts.get(i - 1).arrivedNanos())
                        .isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(100));
            }
            assertThat(hook(p.alice(), hookId).get("dead").asLong()).isZero();
        }
    }

    @Test
    void aRetryAfterFromTheTargetIsObeyed() {
        receiver.respond((r, before) -> before == 0 ? new HookReceiver.Answer(429, Map.of("Retry-After", "2"), 0)
                : HookReceiver.Answer.status(200));
        Api.Pair p = api.pair("hk-retry-after");
        try (WsClient alice = WsClient.connectWelcomed(port, p.alice())) {
            String hookId = httpHook(p, null);
            String key = hookId + ":" + send(alice, p.chat(), "m", 1).getFirst().get("messageId").asString();

            await().atMost(WAIT).until(() -> receiver.requestsFor(key).size() >= 2);
            List<HookReceiver.Request> attempts = receiver.requestsFor(key);
            assertThat(attempts.get(1).arrivedNanos() - attempts.get(0).arrivedNanos()).isGreaterThanOrEqualTo(TimeUnit.SECONDS.toNanos(2));
        }
    }

    @Test
    void aPermanentRefusalIsDeadAtOnceAndAReplayDeliversItWithAFreshBudget() {
        AtomicBoolean accept = new AtomicBoolean();
        receiver.respond((r, before) -> HookReceiver.Answer.status(accept.get() ? 204 : 400));
        Api.Pair p = api.pair("hk-dead");
        try (WsClient alice = WsClient.connectWelcomed(port, p.alice())) {
            String hookId = httpHook(p, null);
            String messageId = send(alice, p.chat(), "m", 1).getFirst().get("messageId").asString();
            String key = hookId + ":" + messageId;

            await().atMost(WAIT).until(() -> hook(p.alice(), hookId).get("dead").asLong() == 1);
            assertThat(receiver.requestsFor(key)).hasSize(1);
            JsonNode dead = api.get("/api/hooks/" + hookId + "/dead?limit=10", p.bob()).body().get("deliveries");
            assertThat(dead).hasSize(1);
            JsonNode d = dead.get(0);
            assertThat(d.get("messageId").asString()).isEqualTo(messageId);
            assertThat(d.get("attempts").asInt()).isEqualTo(1);
            assertThat(d.get("lastError").asString()).isEqualTo("HTTP 400");
            assertThat(d.get("deadAt").asString()).isNotBlank();
            assertThat(hook(p.alice(), hookId).get("pending").asLong()).isZero();

            accept.set(true);
            Api.Response replayed = api.post("/api/hooks/" + hookId + "/dead/replay", p.bob(),
                    Map.of("deliveryIds", List.of(d.get("deliveryId").asLong())));
            assertThat(replayed.status()).isEqualTo(200);
            assertThat(replayed.body().get("replayed").asInt()).isEqualTo(1);
            await().atMost(WAIT).until(() -> receiver.requestsFor(key).size() == 2
                    && hook(p.alice(), hookId).get("pending").asLong() == 0);
            assertThat(receiver.requestsFor(key).get(1).header("Waterline-Attempt")).isEqualTo("1");
            assertThat(hook(p.alice(), hookId).get("dead").asLong()).isZero();
            assertThat(api.post("/api/hooks/" + hookId + "/dead/replay", p.bob(), Map.of()).body().get("replayed").asInt()).isZero();
        }
    }

    @Test
    void anExhaustedBudgetGoesToTheDeadLettersAndReplayingAllDeliversIt() {
        AtomicBoolean accept = new AtomicBoolean();
        receiver.respond((r, before) -> HookReceiver.Answer.status(accept.get() ? 200 : 503));
        Api.Pair p = api.pair("hk-budget");
        try (WsClient alice = WsClient.connectWelcomed(port, p.alice())) {
            String hookId = httpHook(p, null);
            String key = hookId + ":" + send(alice, p.chat(), "m", 1).getFirst().get("messageId").asString();

            await().atMost(WAIT).until(() -> hook(p.alice(), hookId).get("dead").asLong() == 1);
            assertThat(receiver.requestsFor(key)).hasSize(properties.maxAttempts());
            JsonNode d = api.get("/api/hooks/" + hookId + "/dead", p.alice()).body().get("deliveries").get(0);
            assertThat(d.get("attempts").asInt()).isEqualTo(properties.maxAttempts());
            assertThat(d.get("lastError").asString()).contains("gave up after " + properties.maxAttempts() + " attempts").contains("HTTP 503");

            accept.set(true);
            assertThat(api.post("/api/hooks/" + hookId + "/dead/replay", p.alice(), Map.of()).body().get("replayed").asInt()).isEqualTo(1);
            await().atMost(WAIT).until(() -> hook(p.alice(), hookId).get("pending").asLong() == 0
                    && hook(p.alice(), hookId).get("dead").asLong() == 0);
            assertThat(receiver.requestsFor(key)).hasSize(properties.maxAttempts() + 1);
        }
    }

    @Test
    void theBreakerOpensAfterFiveFailuresLetsExactlyOneProbeThroughAmongTwentyWorkersAndClosesOnItsSuccess() {
        assertThat(properties.workers()).isEqualTo(20);
        AtomicBoolean healthy = new AtomicBoolean();
        List<Long> healthyArrivals = new ArrayList<>();
        receiver.respond((r, before) -> {
            if (!healthy.get()) {
                return HookReceiver.Answer.status(500);
            }
            synchronized (healthyArrivals) {
                healthyArrivals.add(r.arrivedNanos());
            }
            return new HookReceiver.Answer(200, Map.of(), 700);
        });
        Api.Pair p = api.pair("hk-breaker");
        try (WsClient alice = WsClient.connectWelcomed(port, p.alice())) {
            String hookId = httpHook(p, null);
            List<JsonNode> accepted = send(alice, p.chat(), "m", 12);

            await().atMost(WAIT).until(() -> "open".equals(hook(p.alice(), hookId).get("breaker").asString()));
            assertThat(receiver.requests().size()).isGreaterThanOrEqualTo(properties.breakerFailures());
            // every call made before it opened has been answered and recorded: the rows wait, held
            await().atMost(WAIT).until(() -> jdbc.queryForObject(
                    "SELECT count(*) FROM hook_deliveries WHERE hook_id = ? AND status NOT IN ('held', 'dead')", Long.class, hookId) == 0);
            healthy.set(true);

            await().atMost(WAIT).until(() -> "closed".equals(hook(p.alice(), hookId).get("breaker").asString()));
            List<Long> arrivals;
            synchronized (healthyArrivals) {
                arrivals = new ArrayList<>(healthyArrivals);
            }
            assertThat(arrivals).isNotEmpty();
            long probe = arrivals.getFirst();
            // the probe was alone: nothing else reached the target while it was out (700 ms)
            assertThat(arrivals.stream().filter(t -> t > probe && t < probe + TimeUnit.MILLISECONDS.toNanos(650))).isEmpty();

            Set<String> keys = new TreeSet<>();
            accepted.forEach(a -> keys.add(hookId + ":" + a.get("messageId").asString()));
            await().atMost(WAIT).until(() -> hook(p.alice(), hookId).get("pending").asLong() == 0);
            assertThat(hook(p.alice(), hookId).get("dead").asLong()).isZero();
            Set<String> delivered = new TreeSet<>();
            receiver.requests().stream().filter(r -> healthy.get()).forEach(r -> delivered.add(r.key()));
            assertThat(delivered).containsAll(keys);
            assertThat(receiver.mostAtOnce()).isLessThanOrEqualTo(properties.perHookConcurrency());
        }
    }

    @Test
    void aHangingTargetDelaysNeitherAnotherHooksDeliveriesNorAcceptanceOnItsChat() {
        try (HookReceiver hanging = new HookReceiver().respond((r, before) -> new HookReceiver.Answer(200, Map.of(), 5_000))) {
            Api.Pair slow = api.pair("hk-hang-slow");
            Api.Pair fast = api.pair("hk-hang-fast");
            createHook(slow.alice(), slow.chat(), Map.of("kind", "http", "url", hanging.url("/slow")));
            String fastHook = httpHook(fast, null);
            try (WsClient slowAlice = WsClient.connectWelcomed(port, slow.alice());
                 WsClient fastAlice = WsClient.connectWelcomed(port, fast.alice())) {
                send(slowAlice, slow.chat(), "s", 30);
                await().atMost(WAIT).until(() -> hanging.requests().size() >= properties.perHookConcurrency());

                long t0 = System.nanoTime();
                List<JsonNode> slowLater = send(slowAlice, slow.chat(), "t", 10);
                long acceptNanos = System.nanoTime() - t0;
                assertThat(slowLater).hasSize(10);
                assertThat(acceptNanos).as("10 sends on the hanging hook's chat accepted").isLessThan(properties.callTimeout().toNanos());

                long t1 = System.nanoTime();
                List<JsonNode> sent = send(fastAlice, fast.chat(), "f", 10);
                await().atMost(WAIT).until(() -> sent.stream().allMatch(a ->
                        !receiver.requestsFor(fastHook + ":" + a.get("messageId").asString()).isEmpty()));
                long latest = sent.stream().mapToLong(a -> receiver.requestsFor(fastHook + ":" + a.get("messageId").asString())
                        .getFirst().arrivedNanos()).max().orElseThrow();
                // every one before a single call to the hanging target could even time out
                assertThat(latest - t1).isLessThan(properties.callTimeout().toNanos());
            }
        }
    }

    @Test
    void aClaimLeftByAStoppedNodeIsSentAgainOnceItsClaimTimesOut() {
        Api.Pair p = api.pair("hk-claim");
        try (WsClient alice = WsClient.connectWelcomed(port, p.alice())) {
            String hookId = httpHook(p, null);
            // a node that claimed the delivery and died before calling: its row stays claimed
            // until its deadline, which is what that node would have set
            jdbc.update("UPDATE hooks SET breaker = 'open', reopen_at = now() + interval '1 hour' WHERE hook_id = ?", hookId);
            String messageId = send(alice, p.chat(), "m", 1).getFirst().get("messageId").asString();
            await().atMost(WAIT).until(() -> jdbc.queryForObject("SELECT count(*) FROM hook_deliveries WHERE hook_id = ? AND status = 'held'",
                    Long.class, hookId) == 1);
            long claimedAt = System.nanoTime();
            jdbc.update("UPDATE hook_deliveries SET status = 'claimed', claimed_by = 'node-that-died/1', attempts = 1,"
                    + " claim_deadline = now() + (? * interval '1 millisecond') WHERE hook_id = ?", properties.claimTimeout().toMillis(), hookId);
            jdbc.update("UPDATE hooks SET breaker = 'closed', reopen_at = NULL WHERE hook_id = ?", hookId);

            String key = hookId + ":" + messageId;
            await().atMost(WAIT).until(() -> !receiver.requestsFor(key).isEmpty());
            HookReceiver.Request r = receiver.requestsFor(key).getFirst();
            assertThat(r.arrivedNanos() - claimedAt).isGreaterThanOrEqualTo(properties.claimTimeout().minusMillis(200).toNanos());
            assertThat(r.header("Waterline-Attempt")).isEqualTo("2");
            await().atMost(WAIT).until(() -> hook(p.alice(), hookId).get("pending").asLong() == 0);
            assertThat(receiver.requestsFor(key)).hasSize(1);
        }
    }

    @Test
    void deletingAHookDropsItsPendingDeliveries() {
        receiver.respond((r, before) -> HookReceiver.Answer.status(503));
        Api.Pair p = api.pair("hk-delete");
        try (WsClient alice = WsClient.connectWelcomed(port, p.alice())) {
            String hookId = httpHook(p, null);
            send(alice, p.chat(), "m", 3);
            await().atMost(WAIT).until(() -> receiver.requests().size() >= 3);
            assertThat(hook(p.alice(), hookId).get("pending").asLong()).isEqualTo(3);

            assertThat(api.delete("/api/hooks/" + hookId, p.bob()).status()).isEqualTo(204);
            assertThat(api.get("/api/hooks/" + hookId, p.alice()).status()).isEqualTo(404);
            assertThat(api.delete("/api/hooks/" + hookId, p.alice()).status()).isEqualTo(404);
            // what it left is purged after, outside the chat's lock
            await().atMost(WAIT).until(() -> jdbc.queryForObject("SELECT count(*) FROM hook_deliveries WHERE hook_id = ?", Long.class, hookId) == 0);
            send(alice, p.chat(), "after", 2);
            assertThat(jdbc.queryForObject("SELECT count(*) FROM hook_deliveries WHERE hook_id = ?", Long.class, hookId)).isZero();
        }
    }

    @Test
    void anOfflineHookNudgesEachRecipientWithNoLiveSessionAndNobodyElse() {
        String alice = api.token("hk-offline-alice");
        String bob = api.token("hk-offline-bob");
        api.token("hk-offline-carol");
        String chat = api.createChat(alice, "hk-offline-bob", "hk-offline-carol");
        String hookId = createHook(alice, chat, Map.of("kind", "http", "url", receiver.url("/push"), "events", List.of("offline")));
        try (WsClient a = WsClient.connectWelcomed(port, alice); WsClient b = WsClient.connectWelcomed(port, bob)) {
            JsonNode accepted = send(a, chat, "m", 1).getFirst();
            String messageId = accepted.get("messageId").asString();

            await().atMost(WAIT).until(() -> hook(alice, hookId).get("pending").asLong() == 0 && !receiver.requests().isEmpty());
            List<HookReceiver.Request> got = receiver.requests();
            assertThat(got).hasSize(1);
            HookReceiver.Request r = got.getFirst();
            assertThat(r.key()).isEqualTo(hookId + ":" + messageId + ":hk-offline-carol");
            JsonNode body = r.json();
            assertThat(body.get("event").asString()).isEqualTo("offline");
            assertThat(body.get("hookId").asString()).isEqualTo(hookId);
            assertThat(body.get("userId").asString()).isEqualTo("hk-offline-carol");
            assertThat(body.get("chatId").asString()).isEqualTo(chat);
            assertThat(body.get("messageId").asString()).isEqualTo(messageId);
            assertThat(body.get("seq").asLong()).isEqualTo(accepted.get("seq").asLong());
        }
    }
}
