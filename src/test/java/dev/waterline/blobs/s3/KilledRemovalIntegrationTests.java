package dev.waterline.blobs.s3;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import dev.waterline.load.deployment.ServerProcess;
import dev.waterline.support.Api;
import dev.waterline.support.WsClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A delete erases a message's files from an object store even when the server dies between the
 * commit and the removal (PROTOCOL.md §9; ledger M1): the packaged server, its files in an
 * S3-compatible store (moto's server; skipped, saying why, where it is not installed), deletes a
 * message with an attachment and is killed with SIGKILL before its removal loop runs; the object is
 * still there. Started again on the same data, it removes the object, because the removal was
 * queued in the delete's own transaction.
 */
class KilledRemovalIntegrationTests {

    static final String BUCKET = "waterline-killed";

    static S3Client s3;

    @BeforeAll
    static void bucket() {
        assumeTrue(MotoServer.get().isPresent(), MotoServer.MISSING);
        s3 = S3BlobStore.client(S3BlobStoreIntegrationTests.properties(BUCKET, 8));
        s3.createBucket(b -> b.bucket(BUCKET));
    }

    @AfterAll
    static void close() {
        if (s3 != null) {
            s3.close();
        }
    }

    private static Path jar() throws Exception {
        try (Stream<Path> files = Files.list(Path.of("target"))) {
            return files.filter(f -> f.getFileName().toString().matches("waterline-.*\\.jar")).findFirst()
                    .orElseThrow(() -> new IllegalStateException("no server jar in target/: the package phase makes it"));
        }
    }

    private static ServerProcess.Launch launch(Path jar, String removalInterval) {
        return new ServerProcess.Launch(jar, "-Xmx256m", List.of(
                "--waterline.attachments.s3.endpoint=" + MotoServer.urlOrNone(),
                "--waterline.attachments.s3.bucket=" + BUCKET,
                "--waterline.attachments.s3.region=us-east-1",
                "--waterline.attachments.s3.access-key=test",
                "--waterline.attachments.s3.secret-key=test",
                "--waterline.attachments.s3.path-style=true",
                "--waterline.blobs.removal-interval=" + removalInterval), 1);
    }

    private static boolean stored(String key) {
        try {
            s3.headObject(b -> b.bucket(BUCKET).key(key));
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
    void aRemovalTheServerDiedBeforeIsDoneWhenItStartsAgain(@TempDir Path work) throws Exception {
        Path jar = jar();
        String attachmentId;
        ServerProcess first = ServerProcess.start(launch(jar, "1h"), work);
        try {
            Api api = new Api(URI.create(first.baseUrl()).getPort());
            String alice = api.token("killed-alice");
            String chat = api.createChat(alice, "killed-bob");
            Api.Response upload = api.callRaw("POST", "/api/chats/" + chat + "/attachments?name=plan.txt", alice,
                    "the plan, in a file", "text/plain");
            assertThat(upload.status()).as(upload.text()).isEqualTo(201);
            attachmentId = upload.body().get("attachmentId").asString();
            String messageId;
            try (WsClient ws = WsClient.connect(api.port(), alice)) {
                ws.send(Map.of("type", "send", "correlationId", "k1", "chatId", chat, "body", "see attached",
                        "attachments", List.of(attachmentId)));
                JsonNode accepted = ws.answer("k1");
                assertThat(accepted.get("type").asString()).as(accepted.toString()).isEqualTo("accepted");
                messageId = accepted.get("messageId").asString();
            }
            assertThat(stored(attachmentId)).as("the file is in the object store").isTrue();
            Api.Response deleted = api.call("DELETE", "/api/chats/" + chat + "/messages/" + messageId, alice, null);
            assertThat(deleted.status()).as(deleted.text()).isEqualTo(200);
            assertThat(api.get("/api/attachments/" + attachmentId, alice).status()).as("gone for every reader at once").isEqualTo(404);
        }
        finally {
            first.kill();
        }
        assertThat(stored(attachmentId)).as("killed before its removal loop ran: the object is still there").isTrue();

        try (ServerProcess again = ServerProcess.start(launch(jar, "200ms"), work)) {
            await().atMost(Duration.ofSeconds(60)).until(() -> !stored(attachmentId));
        }
        assertThatThrownBy(() -> s3.getObject(b -> b.bucket(BUCKET).key(attachmentId))).isInstanceOf(NoSuchKeyException.class);
    }
}
