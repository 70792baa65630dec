package dev.waterline.gateway;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;

import dev.waterline.watermark.WatermarkIndex;
import dev.waterline.watermark.WatermarkKeys;
import dev.waterline.support.Api;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Who may do what, as one table: every REST endpoint and every frame type, asked by a member, by
 * a user who is not a member, about an id that does not exist, without a token and with a bad
 * one; and acks of another user's delivery ids. The tables are checked against what the server
 * actually serves (its request mappings, its frame handlers), so an endpoint or a frame type
 * added without a row here fails this test.
 */
@WaterlineIntegrationTest
class AuthorizationMatrixIntegrationTests {

    enum Caller { MEMBER, NON_MEMBER, UNKNOWN_ID, NO_TOKEN, BAD_TOKEN }

    /** One REST endpoint: how to call it, and the status a member gets. */
    record Endpoint(String method, String pattern, boolean anonymous, int memberStatus, String body) {
        /** About one chat, stream, blob or co-member (in its path, or a chat named in its body): a non-member gets 404. */
        boolean aboutAnId() {
            return pattern.contains("{chatId}") || pattern.contains("{userId}") || pattern.contains("{streamId}") || pattern.contains("{blobId}")
                    || pattern.contains("{hookId}") || pattern.contains("{messageId}") || pattern.contains("{attachmentId}")
                    || (body != null && body.contains("%2$s"));
        }
    }

    static final String UNKNOWN_CHAT = "01NOSUCHCHAT0000000000000";
    static final String UNKNOWN_STREAM = "01NOSUCHSTREAM00000000000";
    static final String UNKNOWN_BLOB = "01NOSUCHBLOB0000000000000";
    static final String UNKNOWN_HOOK = "01NOSUCHHOOK0000000000000";
    static final String UNKNOWN_ATTACHMENT = "01NOSUCHATTACHMENT0000000";
    static final String UNKNOWN_MESSAGE = "01NOSUCHMESSAGE0000000000";

    static final List<Endpoint> REST = List.of(
            new Endpoint("GET", "/", true, 200, null),
            new Endpoint("GET", "/start", true, 200, null),
            new Endpoint("GET", "/v3/api-docs", true, 200, null),
            new Endpoint("GET", "/v3/api-docs.yaml", true, 200, null),
            new Endpoint("GET", "/v3/api-docs/swagger-config", true, 200, null),
            new Endpoint("GET", "/swagger-ui.html", true, 302, null),
            new Endpoint("GET", "/docs/PROTOCOL.md", true, 200, null),
            new Endpoint("GET", "/docs/asyncapi.yaml", true, 200, null),
            new Endpoint("POST", "/api/dev/tokens", true, 200, "{\"userId\":\"matrix-someone\"}"),
            new Endpoint("POST", "/api/chats", false, 201, "{\"members\":[\"matrix-other\"]}"),
            new Endpoint("GET", "/api/chats", false, 200, null),
            new Endpoint("GET", "/api/chats/{chatId}", false, 200, null),
            new Endpoint("POST", "/api/chats/{chatId}/members", false, 200, "{\"userId\":\"matrix-newbie-%d\"}"),
            new Endpoint("GET", "/api/chats/{chatId}/messages", false, 200, null),
            new Endpoint("GET", "/api/chats/{chatId}/messages/{messageId}", false, 200, null),
            // the chat named in the query: a non-member's search of it is 404, as for an unknown chat
            new Endpoint("GET", "/api/search?q=matrix&chatId={chatId}", false, 200, null),
            // presence: of a user who shares a chat with the caller (bob); anyone else's is 404, as an unknown user's
            new Endpoint("GET", "/api/users/{userId}/presence", false, 200, null),
            new Endpoint("GET", "/api/me/settings", false, 200, null),
            new Endpoint("PUT", "/api/me/settings", false, 200, "{\"presence\":\"visible\"}"),
            new Endpoint("PATCH", "/api/chats/{chatId}/messages/{messageId}", false, 200, "{\"body\":\"edited %d\"}"),
            new Endpoint("PUT", "/api/chats/{chatId}/messages/{messageId}/reactions/{emoji}", false, 200, null),
            new Endpoint("DELETE", "/api/chats/{chatId}/messages/{messageId}/reactions/{emoji}", false, 200, null),
            // last of the message's: it is then deleted
            new Endpoint("DELETE", "/api/chats/{chatId}/messages/{messageId}", false, 200, null),
            new Endpoint("POST", "/api/chats/{chatId}/streams", false, 201, "{\"title\":\"matrix\"}"),
            new Endpoint("POST", "/api/dev/bots/echo", false, 201, "{\"chatId\":\"%2$s\"}"),
            new Endpoint("GET", "/api/streams/{streamId}", false, 200, null),
            new Endpoint("POST", "/api/streams/{streamId}/chunks", false, 200, "{\"chunks\":[{\"seq\":1,\"data\":\"m\"}]}"),
            new Endpoint("GET", "/api/streams/{streamId}/chunks", false, 200, null),
            new Endpoint("POST", "/api/streams/{streamId}/blobs", false, 201, "{\"any\":\"bytes\"}"),
            new Endpoint("GET", "/api/blobs/{blobId}", false, 200, null),
            new Endpoint("POST", "/api/chats/{chatId}/attachments", false, 201, "{\"any\":\"bytes\"}"),
            // an attachment alice uploaded and has not sent: hers to read, nobody else's
            new Endpoint("GET", "/api/attachments/{attachmentId}", false, 200, null),
            // a hook on this server itself, which refuses its calls (401): its deliveries go dead at once
            new Endpoint("POST", "/api/chats/{chatId}/hooks", false, 201,
                    "{\"kind\":\"http\",\"url\":\"http://localhost:%3$s/matrix-hook\",\"events\":[\"offline\"]}"),
            new Endpoint("GET", "/api/chats/{chatId}/hooks", false, 200, null),
            new Endpoint("GET", "/api/hooks/{hookId}", false, 200, null),
            new Endpoint("GET", "/api/hooks/{hookId}/dead", false, 200, null),
            new Endpoint("POST", "/api/hooks/{hookId}/dead/replay", false, 200, "{}"),
            new Endpoint("DELETE", "/api/hooks/{hookId}", false, 204, null),
            // last: the stream is then complete, so that its events end with the answer
            new Endpoint("POST", "/api/streams/{streamId}/complete", false, 200, "{\"lastSeq\":1}"),
            new Endpoint("GET", "/api/streams/{streamId}/events", false, 200, null));

    /** Frame types and what a member, a non-member and an unknown id get back (null: no answer but the effect). */
    static final Map<String, String[]> FRAMES = new LinkedHashMap<>();

    static {
        FRAMES.put("send", new String[] {"accepted", "not_found", "not_found"});
        FRAMES.put("read", new String[] {null, "not_found", "not_found"});
        FRAMES.put("ack", new String[] {null, null, null});
        // a member gets no answer; the effect is bob's typing frame
        FRAMES.put("typing", new String[] {null, "not_found", "not_found"});
        FRAMES.put("ping", new String[] {"pong", "pong", "pong"});
        FRAMES.put("subscribe", new String[] {"stream", "not_found", "not_found"});
        FRAMES.put("append", new String[] {"appended", "not_found", "not_found"});
        FRAMES.put("unsubscribe", new String[] {null, null, null});
        FRAMES.put("edit", new String[] {"accepted", "not_found", "not_found"});
        FRAMES.put("react", new String[] {"accepted", "not_found", "not_found"});
        // last of the message's: it is then deleted
        FRAMES.put("delete", new String[] {"accepted", "not_found", "not_found"});
    }

    @LocalServerPort
    int port;

    @Autowired
    List<RequestMappingHandlerMapping> mappings;

    @Autowired
    GatewayHandler gateway;

    @Autowired
    StringRedisTemplate redis;

    final AtomicInteger n = new AtomicInteger();

    @Test
    void theRestTableCoversEveryEndpointTheServerServes() {
        Set<String> served = new TreeSet<>();
        mappings.forEach(mapping -> mapping.getHandlerMethods().forEach((info, method) -> {
            for (String pattern : info.getPatternValues()) {
                if (pattern.equals("/error")) {
                    continue;
                }
                info.getMethodsCondition().getMethods().forEach(m -> served.add(m.name() + " " + pattern));
            }
        }));
        Set<String> table = new TreeSet<>();
        REST.forEach(e -> table.add(e.method() + " " + e.pattern().replaceFirst("\\?.*", "")));
        assertThat(table).isEqualTo(served);
    }

    @Test
    void everyEndpointAnswersEachKindOfCallerAsTheTableSays() {
        Api api = new Api(port);
        String alice = api.token("matrix-alice");
        String mallory = api.token("matrix-mallory");
        String chat = api.createChat(alice, "matrix-bob");
        String stream = api.post("/api/chats/" + chat + "/streams", alice, Map.of()).body().get("streamId").asString();
        String blob = api.postRaw("/api/streams/" + stream + "/blobs", alice, "\"blob\"").body().get("blobId").asString();
        String attachment = api.postRaw("/api/chats/" + chat + "/attachments", alice, "\"file\"").body().get("attachmentId").asString();
        String hook = api.post("/api/chats/" + chat + "/hooks", alice, Map.of("kind", "http", "url", "http://localhost:" + port + "/matrix-hook",
                "events", List.of("offline"))).body().get("hookId").asString();
        String message;
        try (WsClient a = WsClient.connectWelcomed(port, alice)) {
            a.sendMessage("matrix-m", chat, "for the matrix");
            message = a.answer("matrix-m").get("messageId").asString();
        }
        SoftAssertions softly = new SoftAssertions();
        for (Endpoint e : REST) {
            Map<Caller, Api.Response> answers = new LinkedHashMap<>();
            for (Caller caller : Caller.values()) {
                if (caller == Caller.UNKNOWN_ID && !e.aboutAnId()) {
                    continue;
                }
                String token = switch (caller) {
                    case MEMBER, UNKNOWN_ID -> alice;
                    case NON_MEMBER -> mallory;
                    case NO_TOKEN -> null;
                    case BAD_TOKEN -> "not-a-token";
                };
                boolean unknown = caller == Caller.UNKNOWN_ID;
                String path = e.pattern().replace("{chatId}", unknown ? UNKNOWN_CHAT : chat)
                        .replace("{streamId}", unknown ? UNKNOWN_STREAM : stream).replace("{blobId}", unknown ? UNKNOWN_BLOB : blob)
                        .replace("{hookId}", unknown ? UNKNOWN_HOOK : hook).replace("{messageId}", unknown ? UNKNOWN_MESSAGE : message)
                        .replace("{emoji}", "%F0%9F%91%8D").replace("{userId}", unknown ? "matrix-nobody" : "matrix-bob").replace("{attachmentId}", unknown ? UNKNOWN_ATTACHMENT : attachment);
                String body = e.body() == null ? null : String.format(e.body(), n.incrementAndGet(), unknown ? UNKNOWN_CHAT : chat, port);
                Api.Response r = switch (e.method()) {
                    case "GET" -> api.get(path, token);
                    case "DELETE" -> api.delete(path, token);
                    case "PATCH", "PUT" -> api.call(e.method(), path, token, body);
                    default -> api.postRaw(path, token, body);
                };
                answers.put(caller, r);
                int expected;
                if (e.anonymous()) {
                    expected = e.memberStatus();
                }
                else if (caller == Caller.NO_TOKEN || caller == Caller.BAD_TOKEN) {
                    expected = 401;
                }
                else if (caller == Caller.MEMBER || !e.aboutAnId()) {
                    expected = e.memberStatus();
                }
                else {
                    expected = 404;
                }
                softly.assertThat(r.status()).as(e.method() + " " + e.pattern() + " as " + caller).isEqualTo(expected);
            }
            if (e.aboutAnId() && !e.anonymous()) {
                softly.assertThat(answers.get(Caller.NON_MEMBER).body()).as(e.pattern() + ": a non-member cannot tell the chat exists")
                        .isEqualTo(answers.get(Caller.UNKNOWN_ID).body());
            }
        }
        softly.assertAll();
    }

    @Test
    void theFrameTableCoversEveryFrameTypeTheServerAnswers() {
        Set<String> served = new TreeSet<>(gateway.frameTypes());
        assertThat(new TreeSet<>(FRAMES.keySet())).isEqualTo(served);
    }

    @Test
    void everyFrameTypeAnswersAMemberANonMemberAndAnUnknownIdAsTheTableSays() {
        Api api = new Api(port);
        String alice = api.token("fmatrix-alice");
        String bob = api.token("fmatrix-bob");
        String mallory = api.token("fmatrix-mallory");
        String chat = api.createChat(alice, "fmatrix-bob");
        try (WsClient a = WsClient.connectWelcomed(port, alice);
             WsClient b = WsClient.connectWelcomed(port, bob);
             WsClient m = WsClient.connectWelcomed(port, mallory)) {
            a.sendMessage("fm-0", chat, "for bob");
            assertThat(a.answer("fm-0").get("type").asString()).isEqualTo("accepted");
            JsonNode forBob = b.next("message");
            long bobsDelivery = forBob.get("deliveryId").asLong();
            String message = forBob.get("messageId").asString();

            String stream = api.post("/api/chats/" + chat + "/streams", alice, Map.of()).body().get("streamId").asString();
            SoftAssertions softly = new SoftAssertions();
            WsClient[] callers = {a, m, a};
            String[] chats = {chat, chat, UNKNOWN_CHAT};
            String[] streams = {stream, stream, UNKNOWN_STREAM};
            for (var row : FRAMES.entrySet()) {
                String type = row.getKey();
                for (int i = 0; i < 3; i++) {
                    String corr = "fm-" + n.incrementAndGet();
                    WsClient c = callers[i];
                    int errorsBefore = errors(c);
                    String got = switch (type) {
                        case "send" -> {
                            c.send(Map.of("type", "send", "correlationId", corr, "chatId", chats[i], "body", "x"));
                            JsonNode answer = c.answer(corr);
                            yield answer.path("type").asString().equals("error") ? answer.get("code").asString() : "accepted";
                        }
                        case "read" -> {
                            c.send(Map.of("type", "read", "chatId", chats[i], "seq", 1));
                            if (i == 0) {
                                org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).until(() ->
                                        api.get("/api/chats/" + chat, alice).body().path("readSeq").path("fmatrix-alice").asLong() == 1);
                                yield null;
                            }
                            yield c.next("error").get("code").asString();
                        }
                        case "typing" -> {
                            c.send(Map.of("type", "typing", "chatId", chats[i]));
                            if (i == 0) {
                                JsonNode pushed = b.next("typing");
                                softly.assertThat(pushed.path("chatId").asString() + "/" + pushed.path("userId").asString())
                                        .as("bob is told alice types").isEqualTo(chat + "/fmatrix-alice");
                                yield null;
                            }
                            yield c.next("error").get("code").asString();
                        }
                        case "subscribe" -> {
                            c.send(Map.of("type", "subscribe", "streamId", streams[i]));
                            String asked = streams[i];
                            JsonNode answer = c.next(f -> asked.equals(f.path("streamId").asString()), java.time.Duration.ofSeconds(10));
                            yield answer.path("type").asString().equals("error") ? answer.get("code").asString() : answer.path("type").asString();
                        }
                        case "append" -> {
                            c.send(Map.of("type", "append", "streamId", streams[i], "correlationId", corr,
                                    "chunks", List.of(Map.of("seq", 1, "data", "m"))));
                            JsonNode answer = c.next(f -> corr.equals(f.path("correlationId").asString()), java.time.Duration.ofSeconds(10));
                            yield answer.path("type").asString().equals("error") ? answer.get("code").asString() : answer.path("type").asString();
                        }
                        case "edit", "delete", "react" -> {
                            Map<String, Object> frame = new LinkedHashMap<>(Map.of("type", type, "correlationId", corr,
                                    "chatId", chats[i], "messageId", message));
                            if (type.equals("edit")) {
                                frame.put("body", "edited");
                            }
                            if (type.equals("react")) {
                                frame.put("emoji", "👍");
                                frame.put("on", true);
                            }
                            c.send(frame);
                            JsonNode answer = c.answer(corr);
                            yield answer.path("type").asString().equals("error") ? answer.get("code").asString() : "accepted";
                        }
                        case "unsubscribe" -> {
                            c.send(Map.of("type", "unsubscribe", "streamId", streams[i]));
                            yield null;
                        }
                        case "ack" -> {
                            c.send(Map.of("type", "ack", "ids", List.of(bobsDelivery)));
                            yield null;
                        }
                        default -> {
                            c.send(Map.of("type", type));
                            yield c.next(type.equals("ping") ? "pong" : type).path("type").asString();
                        }
                    };
                    softly.assertThat(got).as(type + " as " + new String[] {"member", "non-member", "unknown id"}[i])
                            .isEqualTo(row.getValue()[i]);
                    c.send(Map.of("type", "ping"));
                    c.next("pong");
                    String expected = row.getValue()[i];
                    boolean anError = expected != null && !java.util.Set.of("accepted", "pong", "stream", "appended").contains(expected);
                    softly.assertThat(errors(c) - errorsBefore).as(type + " #" + i + ": errors drawn").isEqualTo(anError ? 1 : 0);
                }
            }
            softly.assertAll();
            assertThat(redis.opsForZSet().score(WatermarkKeys.pendingKey("fmatrix-bob"), Long.toString(bobsDelivery)))
                    .as("acks by alice and mallory of bob's delivery id changed nothing of bob's").isNotNull();
            b.ack(bobsDelivery);
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).until(() ->
                    redis.opsForZSet().score(WatermarkKeys.pendingKey("fmatrix-bob"), Long.toString(bobsDelivery)) == null);
        }
    }

    private static int errors(WsClient c) {
        return (int) c.received().stream().filter(f -> "error".equals(f.path("type").asString())).count();
    }
}
