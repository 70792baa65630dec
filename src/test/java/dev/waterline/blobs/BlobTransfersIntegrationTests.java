package dev.waterline.blobs;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Random;

import dev.waterline.support.Api;
import dev.waterline.support.RawUploads;
import dev.waterline.support.StreamClient;
import dev.waterline.support.WaterlineIntegrationTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * File contents as user content: who may upload is settled before the body is read; a file is
 * stored in parts and read back whole or by range; it is served as a download no browser runs in
 * our origin; and its parts leave the database when its row does, however the row goes.
 */
@WaterlineIntegrationTest
class BlobTransfersIntegrationTests {

    private static final HttpClient HTTP = HttpClient.newHttpClient();

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

    HttpResponse<String> upload(String token, String streamId, String type, byte[] body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/streams/" + streamId + "/blobs"))
                .header("Authorization", "Bearer " + token).header("Content-Type", type).timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<byte[]> download(String token, String blobId, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/blobs/" + blobId))
                .header("Authorization", "Bearer " + token).timeout(Duration.ofSeconds(60));
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    long parts(String blobId) {
        return jdbc.queryForObject("SELECT count(*) FROM blob_parts WHERE blob_id = ?", Long.class, blobId);
    }

    /**
     * A probe ran the heap out with uploads to a stream that did not exist: each body was read
     * whole before the stream was looked up. Here the headers announce 32 MiB and a few bytes
     * follow; the answer comes without the rest.
     */
    @Test
    void anUploadToAStreamThatDoesNotExistIsAnsweredBeforeItsBodyIsRead() throws Exception {
        String alice = api.token("blob-early-alice");
        assertThat(RawUploads.statusBeforeTheBody(port, "/api/streams/01JUNKNOWNSTREAM0000000000/blobs", alice, 32 * 1024 * 1024))
                .startsWith("HTTP/1.1 404");
    }

    /** A download refused for want of a turn carries none of the file's headers (and so no year of caching). */
    @Test
    void aRangePastTheEndIs416WithoutTheFilesCachingHeaders() throws Exception {
        Api.Pair p = api.pair("blob-416");
        String id = streams.open(p.alice(), p.chat()).get("streamId").asString();
        String blobId = Api.JSON.readTree(upload(p.alice(), id, "image/png", new byte[100]).body()).get("blobId").asString();
        HttpResponse<byte[]> past = download(p.bob(), blobId, "Range", "bytes=100-");
        assertThat(past.statusCode()).isEqualTo(416);
        assertThat(past.headers().firstValue("ETag")).isEmpty();
        assertThat(past.headers().firstValue("Cache-Control").orElse("")).doesNotContain("immutable");
    }

    @Test
    void aFileIsStoredInPartsAndReadBackWholeByRangeAndByItsDigest() throws Exception {
        Api.Pair p = api.pair("blob-parts");
        String id = streams.open(p.alice(), p.chat()).get("streamId").asString();
        byte[] file = new byte[700_000];
        new Random(11).nextBytes(file);
        HttpResponse<String> up = upload(p.alice(), id, "application/pdf", file);
        assertThat(up.statusCode()).isEqualTo(201);
        JsonNode stored = Api.JSON.readTree(up.body());
        String blobId = stored.get("blobId").asString();
        String sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(file));
        assertThat(stored.get("sha256").asString()).isEqualTo(sha);
        assertThat(parts(blobId)).as("three parts of 256 KiB at most").isEqualTo(3);

        HttpResponse<byte[]> whole = download(p.bob(), blobId);
        assertThat(whole.statusCode()).isEqualTo(200);
        assertThat(whole.body()).isEqualTo(file);
        assertThat(whole.headers().firstValue("ETag")).hasValue("\"" + sha + "\"");
        assertThat(whole.headers().firstValue("Accept-Ranges")).hasValue("bytes");

        // a range across the first part's end
        HttpResponse<byte[]> range = download(p.bob(), blobId, "Range", "bytes=262000-262999");
        assertThat(range.statusCode()).isEqualTo(206);
        assertThat(range.headers().firstValue("Content-Range")).hasValue("bytes 262000-262999/700000");
        assertThat(range.body()).isEqualTo(Arrays.copyOfRange(file, 262_000, 263_000));
        assertThat(download(p.bob(), blobId, "Range", "bytes=-10").body()).isEqualTo(Arrays.copyOfRange(file, 699_990, 700_000));

        HttpResponse<byte[]> past = download(p.bob(), blobId, "Range", "bytes=700000-");
        assertThat(past.statusCode()).isEqualTo(416);
        assertThat(past.headers().firstValue("Content-Range")).hasValue("bytes */700000");
        assertThat(download(p.bob(), blobId, "If-None-Match", "\"" + sha + "\"").statusCode()).isEqualTo(304);
    }

    /**
     * A blob uploaded as HTML, opened through {@code /api/blobs/{id}?access_token=…}, ran its script
     * in our origin and read the demo's token. Every file is now a download, never sniffed, under a
     * sandbox with no same origin, and served as octet-stream unless its type is passive.
     */
    @Test
    void anHtmlOrSvgFileIsServedAsASandboxedDownloadOfOctetStream() throws Exception {
        Api.Pair p = api.pair("blob-xss");
        String id = streams.open(p.alice(), p.chat()).get("streamId").asString();
        String page = "<html><script>localStorage.setItem('pwned', localStorage.getItem('waterline.token'))</script></html>";
        for (String type : new String[] {"text/html", "image/svg+xml", "application/xhtml+xml", "text/html; charset=utf-8"}) {
            String blobId = Api.JSON.readTree(upload(p.alice(), id, type, page.getBytes(StandardCharsets.UTF_8)).body())
                    .get("blobId").asString();
            HttpResponse<byte[]> served = HTTP.send(HttpRequest.newBuilder(URI.create(
                    "http://127.0.0.1:" + port + "/api/blobs/" + blobId + "?access_token=" + p.bob())).build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            assertThat(served.statusCode()).isEqualTo(200);
            assertThat(served.headers().firstValue("Content-Type")).as(type).hasValue("application/octet-stream");
            assertThat(served.headers().firstValue("Content-Disposition")).hasValueSatisfying(v -> assertThat(v).startsWith("attachment"));
            assertThat(served.headers().firstValue("X-Content-Type-Options")).hasValue("nosniff");
            assertThat(served.headers().firstValue("Content-Security-Policy")).hasValueSatisfying(v ->
                    assertThat(v).contains("sandbox").contains("default-src 'none'").doesNotContain("allow-same-origin"));
            assertThat(served.body()).isEqualTo(page.getBytes(StandardCharsets.UTF_8));
        }
        String png = Api.JSON.readTree(upload(p.alice(), id, "image/png", new byte[] {(byte) 0x89, 'P', 'N', 'G'}).body())
                .get("blobId").asString();
        HttpResponse<byte[]> image = download(p.bob(), png);
        assertThat(image.headers().firstValue("Content-Type")).hasValue("image/png");
        assertThat(image.headers().firstValue("Content-Disposition")).hasValueSatisfying(v -> assertThat(v).startsWith("attachment"));
    }

    /**
     * Chunked, with no Content-Length to refuse it by: the body is read until it passes the limit,
     * answered 413, and nothing of it stays. Written on a raw socket: a client still sending would
     * see the server's close as a reset instead of the answer.
     */
    @Test
    void aFileThatGrowsPastTheLimitWhileItIsReadLeavesNoRowAndNoPart() throws Exception {
        Api.Pair p = api.pair("blob-grow");
        String id = streams.open(p.alice(), p.chat()).get("streamId").asString();
        assertThat(RawUploads.statusOfAGrowingBody(port, "/api/streams/" + id + "/blobs", p.alice(), "application/octet-stream",
                1024 * 1024, 40)).startsWith("HTTP/1.1 413");
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertThat(jdbc.queryForObject("SELECT count(*) FROM stream_blobs WHERE stream_id = ?", Long.class, id)).isZero();
            assertThat(jdbc.queryForObject("SELECT count(*) FROM blob_parts p WHERE NOT EXISTS"
                    + " (SELECT 1 FROM stream_blobs b WHERE b.blob_id = p.blob_id)"
                    + " AND NOT EXISTS (SELECT 1 FROM attachments a WHERE a.blob_id = p.blob_id)"
                    + " AND NOT EXISTS (SELECT 1 FROM blob_removals r WHERE r.blob_id = p.blob_id)", Long.class)).isZero();
        });
    }

    /**
     * A form-typed upload (curl's default for --data-binary) is stored as sent: the container does
     * not read a form body into parameters before the endpoint has checked who may upload.
     */
    @Test
    void anUploadTypedAsAFormIsStoredAsSent() throws Exception {
        Api.Pair p = api.pair("blob-form");
        String id = streams.open(p.alice(), p.chat()).get("streamId").asString();
        byte[] text = "name=value&other=%41".getBytes(StandardCharsets.US_ASCII);
        HttpResponse<String> up = upload(p.alice(), id, "application/x-www-form-urlencoded", text);
        assertThat(up.statusCode()).isEqualTo(201);
        JsonNode blob = Api.JSON.readTree(up.body());
        assertThat(blob.get("size").asLong()).isEqualTo(text.length);
        assertThat(download(p.bob(), blob.get("blobId").asString()).body()).isEqualTo(text);
    }

    /** However the row goes (here: retention deleting its stream), its parts follow through the ledger. */
    @Test
    void whenAStreamIsDeletedItsBlobsPartsAreRemovedThroughTheLedger() throws Exception {
        Api.Pair p = api.pair("blob-gone");
        String id = streams.open(p.alice(), p.chat()).get("streamId").asString();
        String blobId = Api.JSON.readTree(upload(p.alice(), id, "application/zip", new byte[600_000]).body()).get("blobId").asString();
        assertThat(parts(blobId)).isEqualTo(3);

        jdbc.update("DELETE FROM streams WHERE stream_id = ?", id);
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertThat(parts(blobId)).isZero();
            assertThat(jdbc.queryForObject("SELECT count(*) FROM blob_removals WHERE blob_id = ?", Long.class, blobId)).isZero();
        });
        assertThat(download(p.bob(), blobId).statusCode()).isEqualTo(404);
    }

    /** An upload whose client or node went away mid-body: its row and parts go after the upload timeout (1 h). */
    @Test
    void anUploadAbandonedLongerThanTheUploadTimeoutIsDroppedWithItsParts() throws Exception {
        Api.Pair p = api.pair("blob-abandoned");
        String id = streams.open(p.alice(), p.chat()).get("streamId").asString();
        String blobId = "01JABANDONED" + System.nanoTime();
        jdbc.update("INSERT INTO stream_blobs (blob_id, stream_id, content_type, size, sha256, state, created_at)"
                + " VALUES (?, ?, 'application/octet-stream', 0, NULL, 'uploading', now() - interval '2 hours')", blobId, id);
        jdbc.update("INSERT INTO blob_parts (blob_id, part, data) VALUES (?, 0, ?), (?, 1, ?)", blobId, new byte[10], blobId, new byte[10]);
        String recent = "01JRECENT" + System.nanoTime();
        jdbc.update("INSERT INTO stream_blobs (blob_id, stream_id, content_type, size, sha256, state)"
                + " VALUES (?, ?, 'application/octet-stream', 0, NULL, 'uploading')", recent, id);

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertThat(jdbc.queryForObject("SELECT count(*) FROM stream_blobs WHERE blob_id = ?", Long.class, blobId)).isZero();
            assertThat(parts(blobId)).isZero();
        });
        assertThat(jdbc.queryForObject("SELECT count(*) FROM stream_blobs WHERE blob_id = ?", Long.class, recent))
                .as("an upload still within its time").isEqualTo(1);
        jdbc.update("DELETE FROM stream_blobs WHERE blob_id = ?", recent);
    }
}
