package dev.waterline.attachments;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;

import dev.waterline.support.Api;
import dev.waterline.support.RawUploads;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.TestPropertySource;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Attachments (PROTOCOL.md §9) against the real server and its PostgreSQL store: stored and read back
 * as uploaded, served as a download with its digest as ETag and one Range; readable by its uploader
 * only until a send names it, then by the chat's members, and by nobody else; refused before its body
 * is read when the uploader is not a member; nothing kept of an upload past the limit; and deleted
 * with its content when no send names it within the orphan TTL. The limit is 1 MB here, so that an
 * oversized upload is quick to send.
 */
@WaterlineIntegrationTest
@TestPropertySource(properties = {
        "waterline.attachments.max-bytes=1MB",
        "waterline.attachments.orphan-ttl=1h",
        "waterline.attachments.sweep-interval=200ms",
        "waterline.embedded.database=attachments",
        "spring.data.redis.database=40"})
class AttachmentsIntegrationTests {

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @LocalServerPort
    int port;

    @Autowired
    JdbcTemplate jdbc;

    Api api;

    @BeforeEach
    void setUp() {
        api = new Api(port);
    }

    HttpResponse<String> upload(String token, String chatId, String type, String name, byte[] body) throws Exception {
        String query = name == null ? "" : "?name=" + URLEncoder.encode(name, StandardCharsets.UTF_8).replace("+", "%20");
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/chats/" + chatId + "/attachments" + query))
                .header("Authorization", "Bearer " + token).timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (type != null) {
            b.header("Content-Type", type);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    String uploaded(String token, String chatId, byte[] body) throws Exception {
        HttpResponse<String> r = upload(token, chatId, "application/octet-stream", null, body);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
        return Api.JSON.readTree(r.body()).get("attachmentId").asString();
    }

    HttpResponse<byte[]> download(String token, String attachmentId, String... headers) throws Exception {
        return request("GET", token, attachmentId, headers);
    }

    HttpResponse<byte[]> request(String method, String token, String attachmentId, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/attachments/" + attachmentId))
                .header("Authorization", "Bearer " + token).timeout(Duration.ofSeconds(60))
                .method(method, HttpRequest.BodyPublishers.noBody());
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    long rows(String attachmentId) {
        return jdbc.queryForObject("SELECT count(*) FROM attachments WHERE attachment_id = ?", Long.class, attachmentId);
    }

    long parts(String attachmentId) {
        return jdbc.queryForObject("SELECT count(*) FROM blob_parts WHERE blob_id = ?", Long.class, attachmentId);
    }

    long rowsOfChat(String chatId) {
        return jdbc.queryForObject("SELECT count(*) FROM attachments WHERE chat_id = ?", Long.class, chatId);
    }

    /** Parts that belong to no file at all: neither a stream's blob nor an attachment, nor queued for removal. */
    long strayParts() {
        return jdbc.queryForObject("SELECT count(*) FROM blob_parts p"
                + " WHERE NOT EXISTS (SELECT 1 FROM stream_blobs b WHERE b.blob_id = p.blob_id)"
                + " AND NOT EXISTS (SELECT 1 FROM attachments a WHERE a.blob_id = p.blob_id)"
                + " AND NOT EXISTS (SELECT 1 FROM blob_removals r WHERE r.blob_id = p.blob_id)", Long.class);
    }

    /** Sends a message carrying the attachment (PROTOCOL.md §9: {@code send} with {@code attachments}), as its uploader; its messageId. */
    String send(String token, String chatId, String attachmentId) {
        try (WsClient ws = WsClient.connectWelcomed(port, token)) {
            String correlationId = "att-" + System.nanoTime();
            ws.send(Map.of("type", "send", "correlationId", correlationId, "chatId", chatId, "body", "",
                    "attachments", List.of(attachmentId)));
            JsonNode accepted = ws.answer(correlationId);
            assertThat(accepted.get("type").asString()).as(accepted.toString()).isEqualTo("accepted");
            assertThat(jdbc.queryForObject("SELECT message_seq FROM attachments WHERE attachment_id = ?", Long.class, attachmentId))
                    .isEqualTo(accepted.get("seq").asLong());
            return accepted.get("messageId").asString();
        }
    }

    @Test
    void anAttachmentIsReadBackAsUploadedWithItsTypeNameAndDigest() throws Exception {
        Api.Pair p = api.pair("att-round");
        byte[] file = new byte[700_000];
        new Random(7).nextBytes(file);
        String sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(file));

        HttpResponse<String> up = upload(p.alice(), p.chat(), "image/png", "holiday photo.png", file);
        assertThat(up.statusCode()).as(up.body()).isEqualTo(201);
        JsonNode a = Api.JSON.readTree(up.body());
        String id = a.get("attachmentId").asString();
        assertThat(a.get("contentType").asString()).isEqualTo("image/png");
        assertThat(a.get("size").asLong()).isEqualTo(file.length);
        assertThat(a.get("sha256").asString()).isEqualTo(sha);
        assertThat(a.get("name").asString()).isEqualTo("holiday photo.png");
        assertThat(parts(id)).as("three parts of 256 KiB at most").isEqualTo(3);

        HttpResponse<byte[]> whole = download(p.alice(), id);
        assertThat(whole.statusCode()).isEqualTo(200);
        assertThat(whole.body()).isEqualTo(file);
        assertThat(whole.headers().firstValue("Content-Type")).hasValue("image/png");
        assertThat(whole.headers().firstValue("Content-Disposition")).hasValue("attachment; filename=\"holiday photo.png\"");
        assertThat(whole.headers().firstValue("X-Content-Type-Options")).hasValue("nosniff");
        assertThat(whole.headers().firstValue("Content-Security-Policy")).hasValueSatisfying(v -> assertThat(v).contains("sandbox"));
        assertThat(whole.headers().firstValue("ETag")).hasValue("\"" + sha + "\"");
        assertThat(whole.headers().firstValue("Accept-Ranges")).hasValue("bytes");

        HttpResponse<byte[]> range = download(p.alice(), id, "Range", "bytes=262000-262999");
        assertThat(range.statusCode()).isEqualTo(206);
        assertThat(range.headers().firstValue("Content-Range")).hasValue("bytes 262000-262999/700000");
        assertThat(range.body()).isEqualTo(Arrays.copyOfRange(file, 262_000, 263_000));
        assertThat(download(p.alice(), id, "Range", "bytes=700000-").statusCode()).isEqualTo(416);

        HttpResponse<byte[]> cached = download(p.alice(), id, "If-None-Match", "\"" + sha + "\"");
        assertThat(cached.statusCode()).isEqualTo(304);
        assertThat(cached.body()).isEmpty();

        HttpResponse<byte[]> head = request("HEAD", p.alice(), id);
        assertThat(head.statusCode()).isEqualTo(200);
        assertThat(head.headers().firstValue("Content-Length")).hasValue("700000");
        assertThat(head.headers().firstValue("Content-Disposition")).hasValueSatisfying(v -> assertThat(v).startsWith("attachment"));
        assertThat(head.body()).isEmpty();
    }

    @Test
    void anUploadWithoutAContentTypeOrNameIsStoredAsOctetStreamAndAnHtmlOneIsServedAsOctetStream() throws Exception {
        Api.Pair p = api.pair("att-plain");
        HttpResponse<String> up = upload(p.alice(), p.chat(), null, null, "plain bytes".getBytes(StandardCharsets.US_ASCII));
        assertThat(up.statusCode()).as(up.body()).isEqualTo(201);
        JsonNode a = Api.JSON.readTree(up.body());
        assertThat(a.get("contentType").asString()).isEqualTo("application/octet-stream");
        assertThat(a.get("name").isNull()).isTrue();
        String id = a.get("attachmentId").asString();
        HttpResponse<byte[]> served = download(p.alice(), id);
        assertThat(served.headers().firstValue("Content-Type")).hasValue("application/octet-stream");
        assertThat(served.headers().firstValue("Content-Disposition")).hasValue("attachment; filename=\"" + id + "\"");

        HttpResponse<String> page = upload(p.alice(), p.chat(), "text/html", "page.html",
                "<script>alert(localStorage)</script>".getBytes(StandardCharsets.UTF_8));
        String pageId = Api.JSON.readTree(page.body()).get("attachmentId").asString();
        assertThat(Api.JSON.readTree(page.body()).get("contentType").asString()).as("recorded as uploaded").isEqualTo("text/html");
        assertThat(download(p.alice(), pageId).headers().firstValue("Content-Type")).as("served as nothing a browser runs")
                .hasValue("application/octet-stream");
    }

    @Test
    void aNameThatIsTooLongOrHoldsAControlCharacterIsRefusedAndNothingIsStored() throws Exception {
        Api.Pair p = api.pair("att-name");
        for (String bad : new String[] {"x".repeat(256), "line\nbreak", "tab\there", ""}) {
            HttpResponse<String> r = upload(p.alice(), p.chat(), "text/plain", bad, new byte[10]);
            assertThat(r.statusCode()).as(bad).isEqualTo(400);
            assertThat(Api.JSON.readTree(r.body()).get("error").asString()).isEqualTo("invalid");
        }
        assertThat(upload(p.alice(), p.chat(), "text/plain", "ü".repeat(255), new byte[10]).statusCode()).isEqualTo(201);
        assertThat(rowsOfChat(p.chat())).isEqualTo(1);
    }

    /**
     * The headers announce 900 KB (within the limit) and a few bytes follow: a non-member's upload is
     * answered 404 without the rest, as an upload to a chat that does not exist is, and leaves no row.
     */
    @Test
    void aNonMembersUploadIsAnswered404BeforeItsBodyIsReadAndStoresNothing() throws Exception {
        Api.Pair p = api.pair("att-outsider");
        String mallory = api.token("att-outsider-mallory");
        for (String chat : new String[] {p.chat(), "01JNOSUCHCHAT000000000000"}) {
            assertThat(RawUploads.statusBeforeTheBody(port, "/api/chats/" + chat + "/attachments", mallory, 900_000))
                    .startsWith("HTTP/1.1 404");
        }
        assertThat(rowsOfChat(p.chat())).isZero();
    }

    @Test
    void anAttachmentIsReadableByItsUploaderOnlyUntilItIsSentThenByTheChatsMembersAndNeverByOthers() throws Exception {
        Api.Pair p = api.pair("att-who");
        String mallory = api.token("att-who-mallory");
        String id = uploaded(p.alice(), p.chat(), "for bob, soon".getBytes(StandardCharsets.UTF_8));

        assertThat(download(p.alice(), id).statusCode()).as("the uploader").isEqualTo(200);
        HttpResponse<byte[]> early = download(p.bob(), id);
        assertThat(early.statusCode()).as("a member, before the send").isEqualTo(404);
        assertThat(download(mallory, id).statusCode()).as("a stranger").isEqualTo(404);
        assertThat(download(p.bob(), id).body()).as("the same answer as for no attachment at all")
                .isEqualTo(download(p.bob(), "01JNOSUCHATTACHMENT000000").body());

        send(p.alice(), p.chat(), id);
        HttpResponse<byte[]> sent = download(p.bob(), id);
        assertThat(sent.statusCode()).as("a member, once sent").isEqualTo(200);
        assertThat(new String(sent.body(), StandardCharsets.UTF_8)).isEqualTo("for bob, soon");
        assertThat(download(mallory, id).statusCode()).as("a stranger, still").isEqualTo(404);
    }

    @Test
    void aSentAttachmentLivesAsLongAsItsMessageAndGoesWithItsDelete() throws Exception {
        Api.Pair p = api.pair("att-delete");
        String id = uploaded(p.alice(), p.chat(), new byte[300_000]);
        String messageId = send(p.alice(), p.chat(), id);
        assertThat(download(p.bob(), id).statusCode()).isEqualTo(200);

        assertThat(api.delete("/api/chats/" + p.chat() + "/messages/" + messageId, p.alice()).status()).isEqualTo(200);
        assertThat(rows(id)).isZero();
        assertThat(parts(id)).as("erased in the delete's own transaction").isZero();
        assertThat(download(p.alice(), id).statusCode()).isEqualTo(404);
        assertThat(download(p.bob(), id).statusCode()).isEqualTo(404);
    }

    @Test
    void anUnknownAttachmentIs404() throws Exception {
        String alice = api.token("att-unknown-alice");
        HttpResponse<byte[]> r = download(alice, "01JNOSUCHATTACHMENT000000");
        assertThat(r.statusCode()).isEqualTo(404);
        assertThat(Api.JSON.readTree(r.body()).get("error").asString()).isEqualTo("not_found");
    }

    /** A declared length past the limit is refused unread; a chunked body that grows past it is cut off. Neither keeps anything. */
    @Test
    void anUploadPastTheLimitIs413AndLeavesNoRowAndNoPart() throws Exception {
        Api.Pair p = api.pair("att-large");
        HttpResponse<String> declared = upload(p.alice(), p.chat(), "application/zip", "big.zip", new byte[1024 * 1024 + 1]);
        assertThat(declared.statusCode()).isEqualTo(413);
        assertThat(Api.JSON.readTree(declared.body()).get("error").asString()).isEqualTo("too_large");
        assertThat(rowsOfChat(p.chat())).isZero();

        assertThat(RawUploads.statusOfAGrowingBody(port, "/api/chats/" + p.chat() + "/attachments", p.alice(), "application/zip",
                256 * 1024, 12)).startsWith("HTTP/1.1 413");
        assertThat(rowsOfChat(p.chat())).as("the row was deleted when the body passed the limit").isZero();
        assertThat(strayParts()).as("its parts went with it, in the same transaction").isZero();
    }

    @Test
    void anAttachmentNoSendNamedWithinTheOrphanTtlIsDeletedWithItsParts() throws Exception {
        Api.Pair p = api.pair("att-orphan");
        byte[] file = new byte[300_000];
        String orphan = uploaded(p.alice(), p.chat(), file);
        String sent = uploaded(p.alice(), p.chat(), file);
        String recent = uploaded(p.alice(), p.chat(), file);
        send(p.alice(), p.chat(), sent);
        assertThat(parts(orphan)).isEqualTo(2);
        // uploaded two hours ago, past the orphan TTL of one hour
        jdbc.update("UPDATE attachments SET created_at = now() - interval '2 hours' WHERE attachment_id IN (?, ?)", orphan, sent);

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertThat(rows(orphan)).isZero();
            assertThat(parts(orphan)).isZero();
        });
        assertThat(download(p.alice(), orphan).statusCode()).isEqualTo(404);
        assertThat(rows(sent)).as("a sent attachment lives as long as its message").isEqualTo(1);
        assertThat(download(p.bob(), sent).statusCode()).isEqualTo(200);
        assertThat(rows(recent)).as("an unsent one within the TTL").isEqualTo(1);
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(
                jdbc.queryForObject("SELECT count(*) FROM blob_removals WHERE blob_id = ?", Long.class, orphan)).isZero());
        assertThat(api.get("/actuator/prometheus", null).text())
                .containsPattern("waterline_attachments_swept_total\\{outcome=\"orphan\"} [1-9]");
    }

    @Test
    void anUploadAbandonedLongerThanTheUploadTimeoutIsDroppedWithItsParts() throws Exception {
        Api.Pair p = api.pair("att-abandoned");
        String id = "01JABANDONEDATT" + System.nanoTime();
        jdbc.update("INSERT INTO attachments (attachment_id, chat_id, uploader_id, blob_id, content_type, created_at)"
                + " VALUES (?, ?, 'att-abandoned-alice', ?, 'application/octet-stream', now() - interval '2 hours')", id, p.chat(), id);
        jdbc.update("INSERT INTO blob_parts (blob_id, part, data) VALUES (?, 0, ?), (?, 1, ?)", id, new byte[10], id, new byte[10]);
        String recent = "01JRECENTATT" + System.nanoTime();
        jdbc.update("INSERT INTO attachments (attachment_id, chat_id, uploader_id, blob_id, content_type)"
                + " VALUES (?, ?, 'att-abandoned-alice', ?, 'application/octet-stream')", recent, p.chat(), recent);

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertThat(rows(id)).isZero();
            assertThat(parts(id)).isZero();
        });
        assertThat(rows(recent)).as("an upload still within its time").isEqualTo(1);
        jdbc.update("DELETE FROM attachments WHERE attachment_id = ?", recent);
    }
}
