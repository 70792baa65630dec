package dev.waterline.blobs.s3;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Random;

import dev.waterline.blobs.BlobStore;
import dev.waterline.support.Api;
import dev.waterline.support.WaterlineIntegrationTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;
import org.springframework.util.unit.DataSize;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The S3-compatible adapter of the file store against a real S3 API (moto's server, started by the
 * test; skipped, saying so, where it is not installed): a 20 MiB file written as a multipart upload
 * of 5 MiB parts and read back whole and by ranges across the parts' edges; a small file as one PUT;
 * a write that breaks off leaves neither object nor upload; a delete is idempotent. And the server
 * configured with {@code waterline.attachments.s3.*} keeps an attachment there, not in PostgreSQL,
 * serves it from there, and removes it when its row goes.
 */
@WaterlineIntegrationTest
@TestPropertySource(properties = {
        "waterline.attachments.s3.bucket=" + S3BlobStoreIntegrationTests.APP_BUCKET,
        "waterline.attachments.s3.region=us-east-1",
        "waterline.attachments.s3.access-key=test",
        "waterline.attachments.s3.secret-key=test",
        "waterline.attachments.s3.path-style=true",
        "waterline.blobs.removal-interval=200ms",
        "waterline.embedded.database=attachments_s3",
        "spring.data.redis.database=41"})
@DirtiesContext
class S3BlobStoreIntegrationTests {

    static final String APP_BUCKET = "waterline-app";
    static final String BUCKET = "waterline-adapter";
    static final int MIB = 1024 * 1024;

    static S3Client s3;

    @LocalServerPort
    int port;

    @Autowired
    JdbcTemplate jdbc;

    @Autowired
    BlobStore chosen;

    @DynamicPropertySource
    static void objectStore(DynamicPropertyRegistry registry) {
        registry.add("waterline.attachments.s3.endpoint", MotoServer::urlOrNone);
    }

    @BeforeAll
    static void buckets() {
        assumeTrue(MotoServer.get().isPresent(), MotoServer.MISSING);
        s3 = S3BlobStore.client(properties(APP_BUCKET, 8));
        s3.createBucket(b -> b.bucket(APP_BUCKET));
        s3.createBucket(b -> b.bucket(BUCKET));
    }

    @AfterAll
    static void close() {
        if (s3 != null) {
            s3.close();
        }
    }

    static S3Properties properties(String bucket, int partMiB) {
        return new S3Properties(MotoServer.urlOrNone(), "us-east-1", bucket, "test", "test", true, DataSize.ofMegabytes(partMiB));
    }

    static byte[] random(int size, long seed) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }

    static byte[] read(BlobStore store, String key, long from, long to) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        store.read(key, from, to, out);
        return out.toByteArray();
    }

    boolean exists(String bucket, String key) {
        try {
            s3.headObject(b -> b.bucket(bucket).key(key));
            return true;
        }
        catch (NoSuchKeyException gone) {
            return false;
        }
        catch (software.amazon.awssdk.services.s3.model.S3Exception e) {
            if (e.statusCode() == 404) {
                return false;
            }
            throw e;
        }
    }

    @Test
    void aTwentyMebibyteFileIsWrittenInPartsAndReadBackWholeAndByRangesAcrossTheirEdges() throws Exception {
        S3BlobStore store = new S3BlobStore(properties(BUCKET, 5));
        byte[] file = random(20 * MIB, 20);
        store.write("twenty", new ByteArrayInputStream(file));

        assertThat(s3.headObject(b -> b.bucket(BUCKET).key("twenty")).contentLength()).isEqualTo(file.length);
        assertThat(s3.headObject(b -> b.bucket(BUCKET).key("twenty")).eTag()).as("a multipart object's ETag names its parts")
                .endsWith("-4\"");
        byte[] whole = read(store, "twenty", 0, file.length);
        assertThat(MessageDigest.getInstance("SHA-256").digest(whole)).isEqualTo(MessageDigest.getInstance("SHA-256").digest(file));
        long edge = 5L * MIB;
        assertThat(read(store, "twenty", edge - 1000, edge + 1000)).isEqualTo(Arrays.copyOfRange(file, (int) edge - 1000, (int) edge + 1000));
        assertThat(read(store, "twenty", 0, 1)).isEqualTo(new byte[] {file[0]});
        assertThat(read(store, "twenty", file.length - 10, file.length)).isEqualTo(Arrays.copyOfRange(file, file.length - 10, file.length));
        assertThat(read(store, "twenty", 7, 7)).isEmpty();

        store.delete("twenty");
        assertThat(exists(BUCKET, "twenty")).isFalse();
        store.delete("twenty");
        assertThatThrownBy(() -> read(store, "twenty", 0, 10)).isInstanceOf(IOException.class);
        store.destroy();
    }

    @Test
    void aFileSmallerThanOnePartIsOnePutAndAnEmptyFileIsStoredToo() throws Exception {
        S3BlobStore store = new S3BlobStore(properties(BUCKET, 5));
        byte[] small = random(300_000, 3);
        store.write("small", new ByteArrayInputStream(small));
        assertThat(s3.headObject(b -> b.bucket(BUCKET).key("small")).eTag()).doesNotContain("-");
        assertThat(read(store, "small", 0, small.length)).isEqualTo(small);
        store.write("empty", InputStream.nullInputStream());
        assertThat(s3.headObject(b -> b.bucket(BUCKET).key("empty")).contentLength()).isZero();
        byte[] exact = random(5 * MIB, 5);
        store.write("exact", new ByteArrayInputStream(exact));
        assertThat(read(store, "exact", 0, exact.length)).isEqualTo(exact);
        store.destroy();
    }

    @Test
    void aWriteThatBreaksOffLeavesNeitherAnObjectNorAnUnfinishedUpload() throws Exception {
        S3BlobStore store = new S3BlobStore(properties(BUCKET, 5));
        InputStream breaking = new InputStream() {
            long left = 12L * MIB;

            @Override
            public int read() throws IOException {
                byte[] one = new byte[1];
                return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                if (left <= 0) {
                    throw new IOException("the client went away");
                }
                int n = (int) Math.min(len, left);
                left -= n;
                return n;
            }
        };
        assertThatThrownBy(() -> store.write("broken", breaking)).isInstanceOf(IOException.class).hasMessageContaining("went away");
        assertThat(exists(BUCKET, "broken")).isFalse();
        assertThat(s3.listMultipartUploads(b -> b.bucket(BUCKET).prefix("broken")).uploads()).isEmpty();
        store.destroy();
    }

    /** A node that died mid-write left an unfinished upload: the removal of its key aborts it. */
    @Test
    void aDeleteAbortsAnUploadANodeLeftUnfinished() {
        S3BlobStore store = new S3BlobStore(properties(BUCKET, 5));
        s3.createMultipartUpload(b -> b.bucket(BUCKET).key("left"));
        assertThat(s3.listMultipartUploads(b -> b.bucket(BUCKET).prefix("left")).uploads()).hasSize(1);
        store.delete("left");
        assertThat(s3.listMultipartUploads(b -> b.bucket(BUCKET).prefix("left")).uploads()).isEmpty();
        store.destroy();
    }

    @Test
    void theServerKeepsAnAttachmentInTheObjectStoreServesItFromThereAndRemovesItWithItsRow() throws Exception {
        assertThat(chosen).as("one store for every user file, chosen by waterline.attachments.s3.*").isInstanceOf(S3BlobStore.class);
        Api api = new Api(port);
        Api.Pair p = api.pair("s3-att");
        byte[] file = random(3 * MIB + 17, 33);
        HttpClient http = HttpClient.newHttpClient();
        HttpResponse<String> up = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/chats/" + p.chat()
                        + "/attachments?name=scan.pdf")).header("Authorization", "Bearer " + p.alice()).header("Content-Type", "application/pdf")
                .POST(HttpRequest.BodyPublishers.ofByteArray(file)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(up.statusCode()).as(up.body()).isEqualTo(201);
        JsonNode a = Api.JSON.readTree(up.body());
        String id = a.get("attachmentId").asString();
        assertThat(a.get("sha256").asString()).isEqualTo(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(file)));
        assertThat(exists(APP_BUCKET, id)).isTrue();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM blob_parts WHERE blob_id = ?", Long.class, id)).isZero();

        HttpResponse<byte[]> whole = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/attachments/" + id))
                .header("Authorization", "Bearer " + p.alice()).build(), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(whole.statusCode()).isEqualTo(200);
        assertThat(whole.body()).isEqualTo(file);
        assertThat(whole.headers().firstValue("Content-Type")).hasValue("application/pdf");
        HttpResponse<byte[]> range = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/attachments/" + id))
                .header("Authorization", "Bearer " + p.alice()).header("Range", "bytes=1000-1999").build(), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(range.statusCode()).isEqualTo(206);
        assertThat(range.body()).isEqualTo(Arrays.copyOfRange(file, 1000, 2000));

        jdbc.update("DELETE FROM attachments WHERE attachment_id = ?", id);
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(exists(APP_BUCKET, id)).isFalse());
    }
}
