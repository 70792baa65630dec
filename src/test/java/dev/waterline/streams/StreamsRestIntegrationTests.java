package dev.waterline.streams;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import dev.waterline.support.Api;
import dev.waterline.support.StreamClient;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import tools.jackson.databind.JsonNode;

import static dev.waterline.support.StreamClient.chunk;
import static dev.waterline.support.StreamClient.chunks;
import static org.assertj.core.api.Assertions.assertThat;

/** PROTOCOL.md §6 over REST: opening, the producer sequence, every refusal, the lifecycle, blobs. */
@WaterlineIntegrationTest
class StreamsRestIntegrationTests {

    private static final String UNKNOWN = "01ARZ3NDEKTSV4RRFFQ69G5FAV";

    @LocalServerPort
    int port;

    @Autowired
    JdbcTemplate jdbc;

    Api api;
    StreamClient streams;

    @BeforeEach
    void setUp() {
        api = new Api(port);
        streams = new StreamClient(api);
    }

    long stored(String streamId) {
        return jdbc.queryForObject("SELECT count(*) FROM stream_chunks WHERE stream_id = ?", Long.class, streamId);
    }

    @Test
    void openingAStreamCommitsAChatMessageOfKindStreamThatHistoryAndLiveFramesCarry() {
        Api.Pair p = api.pair("st-open");
        try (WsClient bob = WsClient.connectWelcomed(port, p.bob())) {
            Api.Response r = api.post("/api/chats/" + p.chat() + "/streams", p.alice(), Map.of("title", "reply"));

            assertThat(r.status()).isEqualTo(201);
            JsonNode s = r.body();
            assertThat(s.get("streamId").asString()).isNotBlank();
            assertThat(s.get("chatId").asString()).isEqualTo(p.chat());
            assertThat(s.get("producerId").asString()).isEqualTo("st-open-alice");
            assertThat(s.get("state").asString()).isEqualTo("open");
            assertThat(s.get("lastSeq").asLong()).isZero();
            assertThat(s.get("seq").asLong()).isEqualTo(1);
            String messageId = s.get("messageId").asString();

            JsonNode live = bob.next("message");
            assertThat(live.get("kind").asString()).isEqualTo("stream");
            assertThat(live.get("streamId").asString()).isEqualTo(s.get("streamId").asString());
            assertThat(live.get("messageId").asString()).isEqualTo(messageId);
            assertThat(live.get("seq").asLong()).isEqualTo(1);
            bob.ack(live.get("deliveryId").asLong());

            bob.sendMessage("after", p.chat(), "plain");
            bob.answer("after");
            List<JsonNode> history = api.history(p.alice(), p.chat(), null, 100);
            assertThat(history).hasSize(2);
            assertThat(history.get(0).get("kind").asString()).isEqualTo("stream");
            assertThat(history.get(0).get("streamId").asString()).isEqualTo(s.get("streamId").asString());
            assertThat(history.get(0).get("body").asString()).isEqualTo("reply");
            assertThat(history.get(1).get("kind").asString()).isEqualTo("text");
            assertThat(history.get(1).has("streamId")).isFalse();
        }
        Api.Response got = api.get("/api/streams/" + api.post("/api/chats/" + p.chat() + "/streams", p.bob(), Map.of())
                .body().get("streamId").asString(), p.alice());
        assertThat(got.status()).isEqualTo(200);
        assertThat(got.body().get("producerId").asString()).isEqualTo("st-open-bob");
        assertThat(got.body().get("createdAt").asString()).endsWith("Z");
    }

    @Test
    void aRetriedOpenWithTheSameCorrelationIdReturnsTheSameStream() {
        Api.Pair p = api.pair("st-reopen");
        Api.Response first = api.post("/api/chats/" + p.chat() + "/streams", p.alice(), Map.of("correlationId", "open-1"));
        Api.Response again = api.post("/api/chats/" + p.chat() + "/streams", p.alice(), Map.of("correlationId", "open-1"));

        assertThat(first.status()).isEqualTo(201);
        assertThat(again.status()).isEqualTo(201);
        assertThat(again.body().get("streamId").asString()).isEqualTo(first.body().get("streamId").asString());
        assertThat(api.history(p.alice(), p.chat(), null, 100)).hasSize(1);
    }

    @Test
    void openingIsForMembersOnlyAndItsBodyIsChecked() {
        Api.Pair p = api.pair("st-open-bad");
        String eve = api.token("st-open-bad-eve");
        assertThat(api.post("/api/chats/" + p.chat() + "/streams", eve, Map.of()).status()).isEqualTo(404);
        assertThat(api.post("/api/chats/" + UNKNOWN + "/streams", p.alice(), Map.of()).status()).isEqualTo(404);
        assertThat(api.post("/api/chats/" + p.chat() + "/streams", p.alice(), Map.of("title", 5)).status()).isEqualTo(400);
        assertThat(api.postRaw("/api/chats/" + p.chat() + "/streams", p.alice(), "{").status()).isEqualTo(400);
        assertThat(api.post("/api/chats/" + p.chat() + "/streams", null, Map.of()).status()).isEqualTo(401);
        assertThat(api.history(p.alice(), p.chat(), null, 100)).isEmpty();
    }

    @Test
    void chunksAreAppendedInProducerSequenceAndPagedInSeqOrder() {
        Api.Pair p = api.pair("st-append");
        String id = streams.open(p.alice(), p.chat()).get("streamId").asString();

        Api.Response first = streams.append(p.alice(), id, chunks(1, 3, "w"));
        Api.Response second = streams.append(p.alice(), id, chunks(4, 5, "w"));

        assertThat(first.status()).isEqualTo(200);
        assertThat(first.body().get("streamId").asString()).isEqualTo(id);
        assertThat(first.body().get("lastSeq").asLong()).isEqualTo(3);
        assertThat(second.body().get("lastSeq").asLong()).isEqualTo(5);
        Api.Response page = api.get("/api/streams/" + id + "/chunks?fromSeq=2&limit=2", p.bob());
        assertThat(page.status()).isEqualTo(200);
        assertThat(page.body().get("state").asString()).isEqualTo("open");
        assertThat(page.body().get("lastSeq").asLong()).isEqualTo(5);
        assertThat(page.body().get("hasMore").asBoolean()).isTrue();
        List<JsonNode> got = list(page.body().get("chunks"));
        assertThat(got).extracting(c -> c.get("seq").asLong()).containsExactly(2L, 3L);
        assertThat(got).extracting(c -> c.get("data").asString()).containsExactly("w2", "w3");
        assertThat(got.getFirst().get("at").asString()).endsWith("Z");
        assertThat(streams.readAll(p.bob(), id, 1, 2)).extracting(c -> c.get("data").asString())
                .containsExactly("w1", "w2", "w3", "w4", "w5");
        Api.Response end = api.get("/api/streams/" + id + "/chunks?fromSeq=6", p.bob());
        assertThat(list(end.body().get("chunks"))).isEmpty();
        assertThat(end.body().get("hasMore").asBoolean()).isFalse();
    }

    @Test
    void aRetryOfStoredChunksWithEqualContentIsAcknowledgedAndWritesNothing() {
        Api.Pair p = api.pair("st-retry");
        String id = streams.open(p.alice(), p.chat()).get("streamId").asString();
        streams.append(p.alice(), id, chunks(1, 3, "r"));

        Api.Response retry = streams.append(p.alice(), id, chunks(1, 3, "r"));
        Api.Response straddle = streams.append(p.alice(), id, chunks(3, 5, "r"));

        assertThat(retry.status()).isEqualTo(200);
        assertThat(retry.body().get("lastSeq").asLong()).isEqualTo(3);
        assertThat(straddle.status()).isEqualTo(200);
        assertThat(straddle.body().get("lastSeq").asLong()).isEqualTo(5);
        assertThat(stored(id)).isEqualTo(5);
        assertThat(streams.readAll(p.alice(), id, 1, 100)).extracting(c -> c.get("seq").asLong())
                .containsExactly(1L, 2L, 3L, 4L, 5L);
    }

    @Test
    void aRetryWithOtherContentIsAConflictAndAGapIsRefusedAndNothingOfEitherIsStored() {
        Api.Pair p = api.pair("st-conflict");
        String id = streams.open(p.alice(), p.chat()).get("streamId").asString();
        streams.append(p.alice(), id, chunks(1, 2, "c"));

        Api.Response conflict = streams.append(p.alice(), id, List.of(chunk(2, "other"), chunk(3, "c3")));
        Api.Response gap = streams.append(p.alice(), id, chunks(4, 6, "c"));
        long storedAfterRefusals = stored(id);
        Api.Response straddling = streams.append(p.alice(), id, List.of(chunk(1, "c1"), chunk(2, "c2"), chunk(3, "c3")));

        assertThat(conflict.status()).isEqualTo(409);
        assertThat(conflict.body().get("error").asString()).isEqualTo("conflict");
        assertThat(conflict.body().get("expectedSeq").asLong()).isEqualTo(3);
        assertThat(gap.status()).isEqualTo(409);
        assertThat(gap.body().get("error").asString()).isEqualTo("gap");
        assertThat(gap.body().get("expectedSeq").asLong()).isEqualTo(3);
        assertThat(storedAfterRefusals).as("nothing of a refused request is stored").isEqualTo(2);
        assertThat(straddling.status()).isEqualTo(200);
        assertThat(straddling.body().get("lastSeq").asLong()).isEqualTo(3);
    }

    @Test
    void malformedChunksAreInvalidAndStoreNothing() {
        Api.Pair p = api.pair("st-malformed");
        String id = streams.open(p.alice(), p.chat()).get("streamId").asString();
        List<Object> bad = List.of(
                Map.of(),
                Map.of("chunks", "x"),
                Map.of("chunks", List.of()),
                Map.of("chunks", List.of(Map.of("data", "no seq"))),
                Map.of("chunks", List.of(Map.of("seq", 0, "data", "zero"))),
                Map.of("chunks", List.of(Map.of("seq", 1.5, "data", "fraction"))),
                Map.of("chunks", List.of(Map.of("seq", "1", "data", "string seq"))),
                Map.of("chunks", List.of(Map.of("seq", 1))),
                Map.of("chunks", List.of(Map.of("seq", 1, "data", "x", "blobId", "y"))),
                Map.of("chunks", List.of(Map.of("seq", 1, "data", 7))),
                Map.of("chunks", List.of("not an object")),
                Map.of("chunks", List.of(chunk(1, "a"), chunk(3, "c"))),
                Map.of("chunks", List.of(chunk(2, "b"), chunk(1, "a"))));
        for (Object body : bad) {
            Api.Response r = api.post("/api/streams/" + id + "/chunks", p.alice(), body);
            assertThat(r.status()).as(body.toString()).isEqualTo(400);
            assertThat(r.body().get("error").asString()).isEqualTo("invalid");
        }
        assertThat(api.postRaw("/api/streams/" + id + "/chunks", p.alice(), "{\"chunks\":[").status()).isEqualTo(400);
        assertThat(api.postRaw("/api/streams/" + id + "/chunks", p.alice(),
                "{\"chunks\":[{\"seq\":1,\"data\":\"nul\\u0000\"}]}").status()).isEqualTo(400);
        assertThat(stored(id)).isZero();
        assertThat(streams.append(p.alice(), id, chunks(1, 1, "ok")).status()).isEqualTo(200);
    }

    @Test
    void oversizeDataAndTooManyChunksAreRefusedWhole() {
        Api.Pair p = api.pair("st-big");
        String id = streams.open(p.alice(), p.chat()).get("streamId").asString();

        Api.Response longData = streams.append(p.alice(), id, List.of(chunk(1, "ok"), chunk(2, "x".repeat(16385))));
        Api.Response longest = streams.append(p.alice(), id, List.of(chunk(1, "y".repeat(16384))));
        Api.Response tooMany = streams.append(p.alice(), id, chunks(2, 1002, "n"));
        Api.Response most = streams.append(p.alice(), id, chunks(2, 1001, "n"));

        assertThat(longData.status()).isEqualTo(413);
        assertThat(longData.body().get("error").asString()).isEqualTo("too_large");
        assertThat(longest.status()).isEqualTo(200);
        assertThat(tooMany.status()).isEqualTo(400);
        assertThat(most.status()).isEqualTo(200);
        assertThat(most.body().get("lastSeq").asLong()).isEqualTo(1001);
        assertThat(stored(id)).isEqualTo(1001);
    }

    @Test
    void onlyTheProducerAppendsOrCompletesAnotherMemberIsForbiddenAndAStrangerFindsNothing() throws Exception {
        Api.Pair p = api.pair("st-who");
        String eve = api.token("st-who-eve");
        String id = streams.open(p.alice(), p.chat()).get("streamId").asString();
        streams.append(p.alice(), id, chunks(1, 1, "a"));

        assertThat(streams.append(p.bob(), id, chunks(2, 2, "b")).status()).isEqualTo(403);
        assertThat(streams.append(p.bob(), id, chunks(2, 2, "b")).body().get("error").asString()).isEqualTo("forbidden");
        assertThat(streams.complete(p.bob(), id, 1).status()).isEqualTo(403);
        assertThat(streams.append(eve, id, chunks(2, 2, "e")).status()).isEqualTo(404);
        assertThat(streams.complete(eve, id, 1).status()).isEqualTo(404);
        assertThat(api.get("/api/streams/" + id, eve).status()).isEqualTo(404);
        assertThat(api.get("/api/streams/" + id + "/chunks", eve).status()).isEqualTo(404);
        assertThat(streams.events(id, "access_token=" + eve, Map.of()).status()).isEqualTo(404);
        assertThat(upload(eve, id, "text/plain", new byte[] {1}).statusCode()).isEqualTo(404);
        assertThat(upload(p.bob(), id, "text/plain", new byte[] {1}).statusCode()).isEqualTo(403);
        for (String path : List.of("/api/streams/" + UNKNOWN, "/api/streams/" + UNKNOWN + "/chunks", "/api/blobs/" + UNKNOWN)) {
            assertThat(api.get(path, p.alice()).status()).as(path).isEqualTo(404);
        }
        assertThat(streams.append(p.alice(), UNKNOWN, chunks(1, 1, "x")).status()).isEqualTo(404);
        assertThat(streams.complete(p.alice(), UNKNOWN, 0).status()).isEqualTo(404);
        assertThat(stored(id)).isEqualTo(1);
    }

    @Test
    void completingChecksTheLastSeqAndAClosedStreamTakesNoMore() {
        Api.Pair p = api.pair("st-life");
        String id = streams.open(p.alice(), p.chat()).get("streamId").asString();
        streams.append(p.alice(), id, chunks(1, 2, "l"));

        Api.Response early = streams.complete(p.alice(), id, 3);
        Api.Response behind = streams.complete(p.alice(), id, 1);
        Api.Response done = streams.complete(p.alice(), id, 2);
        Api.Response again = streams.complete(p.alice(), id, 2);
        Api.Response more = streams.append(p.alice(), id, chunks(3, 3, "l"));
        Api.Response abortAfter = streams.abort(p.alice(), id, "late");

        assertThat(early.status()).isEqualTo(409);
        assertThat(early.body().get("error").asString()).isEqualTo("gap");
        assertThat(early.body().get("expectedSeq").asLong()).isEqualTo(3);
        assertThat(behind.status()).isEqualTo(409);
        assertThat(behind.body().get("error").asString()).isEqualTo("conflict");
        assertThat(done.status()).isEqualTo(200);
        assertThat(done.body().get("state").asString()).isEqualTo("complete");
        assertThat(done.body().get("lastSeq").asLong()).isEqualTo(2);
        assertThat(again.status()).isEqualTo(200);
        assertThat(more.status()).isEqualTo(409);
        assertThat(more.body().get("error").asString()).isEqualTo("closed");
        assertThat(abortAfter.status()).isEqualTo(409);
        assertThat(api.get("/api/streams/" + id, p.bob()).body().get("state").asString()).isEqualTo("complete");
        assertThat(stored(id)).isEqualTo(2);
    }

    @Test
    void anAbortedStreamKeepsItsReasonAndTakesNoMore() {
        Api.Pair p = api.pair("st-abort");
        String id = streams.open(p.alice(), p.chat()).get("streamId").asString();
        streams.append(p.alice(), id, chunks(1, 1, "a"));

        Api.Response aborted = streams.abort(p.alice(), id, "model failed");
        Api.Response twice = streams.abort(p.alice(), id, "model failed");

        assertThat(aborted.status()).isEqualTo(200);
        assertThat(aborted.body().get("state").asString()).isEqualTo("aborted");
        assertThat(aborted.body().get("reason").asString()).isEqualTo("model failed");
        assertThat(twice.status()).isEqualTo(200);
        assertThat(streams.append(p.alice(), id, chunks(2, 2, "a")).body().get("error").asString()).isEqualTo("closed");
        assertThat(streams.complete(p.alice(), id, 1).status()).isEqualTo(409);
        for (Object bad : List.of(Map.of(), Map.of("aborted", false), Map.of("lastSeq", -1), Map.of("lastSeq", "1"),
                Map.of("aborted", true, "lastSeq", 1))) {
            assertThat(api.post("/api/streams/" + id + "/complete", p.alice(), bad).status()).as(bad.toString()).isEqualTo(400);
        }
    }

    @Test
    void aBlobIsUploadedToItsStreamNamedByAChunkAndReadBackByMembers() throws Exception {
        Api.Pair p = api.pair("st-blob");
        String eve = api.token("st-blob-eve");
        String id = streams.open(p.alice(), p.chat()).get("streamId").asString();
        String other = streams.open(p.alice(), p.chat()).get("streamId").asString();
        byte[] png = new byte[200_000];
        new java.util.Random(7).nextBytes(png);

        HttpResponse<String> up = upload(p.alice(), id, "image/png", png);
        assertThat(up.statusCode()).isEqualTo(201);
        JsonNode blob = Api.JSON.readTree(up.body());
        assertThat(blob.get("size").asLong()).isEqualTo(png.length);
        assertThat(blob.get("contentType").asString()).isEqualTo("image/png");
        assertThat(blob.get("sha256").asString()).isEqualTo(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(png)));
        String blobId = blob.get("blobId").asString();

        Api.Response foreign = streams.append(p.alice(), other, List.of(Map.of("seq", 1, "blobId", blobId)));
        Api.Response unknown = streams.append(p.alice(), id, List.of(Map.of("seq", 1, "blobId", UNKNOWN)));
        Api.Response named = streams.append(p.alice(), id, List.of(chunk(1, "see:"), Map.of("seq", 2, "blobId", blobId)));

        assertThat(foreign.status()).isEqualTo(400);
        assertThat(unknown.status()).isEqualTo(400);
        assertThat(named.status()).isEqualTo(200);
        assertThat(stored(other)).isZero();
        JsonNode c = streams.readAll(p.bob(), id, 2, 10).getFirst();
        assertThat(c.get("blobId").asString()).isEqualTo(blobId);
        assertThat(c.get("size").asLong()).isEqualTo(png.length);
        assertThat(c.get("contentType").asString()).isEqualTo("image/png");
        assertThat(c.has("data")).isFalse();
        HttpResponse<byte[]> bytes = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                "http://127.0.0.1:" + port + "/api/blobs/" + blobId)).header("Authorization", "Bearer " + p.bob()).build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(bytes.statusCode()).isEqualTo(200);
        assertThat(bytes.headers().firstValue("Content-Type")).hasValue("image/png");
        assertThat(bytes.body()).isEqualTo(png);
        assertThat(api.get("/api/blobs/" + blobId, eve).status()).isEqualTo(404);
    }

    @Test
    void aBlobOverTheLimitIsTooLargeAndAClosedStreamTakesNoBlob() throws Exception {
        Api.Pair p = api.pair("st-blob-big");
        String id = streams.open(p.alice(), p.chat()).get("streamId").asString();

        HttpResponse<String> big = upload(p.alice(), id, "application/octet-stream", new byte[32 * 1024 * 1024 + 1]);
        assertThat(big.statusCode()).isEqualTo(413);
        assertThat(Api.JSON.readTree(big.body()).get("error").asString()).isEqualTo("too_large");
        streams.complete(p.alice(), id, 0);
        assertThat(upload(p.alice(), id, "text/plain", "x".getBytes()).statusCode()).isEqualTo(409);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM stream_blobs WHERE stream_id = ?", Long.class, id)).isZero();
    }

    HttpResponse<String> upload(String token, String streamId, String type, byte[] body) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                        "http://127.0.0.1:" + port + "/api/streams/" + streamId + "/blobs"))
                .header("Authorization", "Bearer " + token).header("Content-Type", type)
                .timeout(Duration.ofSeconds(30)).POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    static List<JsonNode> list(JsonNode array) {
        List<JsonNode> out = new ArrayList<>();
        array.forEach(out::add);
        return out;
    }
}
