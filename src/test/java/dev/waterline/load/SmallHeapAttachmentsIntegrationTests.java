package dev.waterline.load;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import dev.waterline.load.bench.TransferBench;
import dev.waterline.load.deployment.ServerProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Twenty uploads of the largest attachment (25 MiB, {@code waterline.attachments.max-bytes}), all
 * at once, then twenty downloads of them, all at once, against the packaged server with a 256 MB
 * heap and {@code -XX:+ExitOnOutOfMemoryError} (as the harness starts it): every one succeeds, byte
 * for byte, and the server is still up. The attachments' twin of
 * {@link SmallHeapTransfersIntegrationTests}: the same store, reached through another owner.
 */
class SmallHeapAttachmentsIntegrationTests {

    static final JsonMapper JSON = JsonMapper.builder().build();
    static final int FILES = 20;
    static final long SIZE = 25L * 1024 * 1024;

    @Test
    void twentyMaximumSizeAttachmentsUploadedAndThenDownloadedAtOnceAllSucceedWithA256MbHeap(@TempDir Path work) throws Exception {
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        // all twenty at once: every transfer turn open to them, none waiting (the default is 16 turns, 4 a user)
        List<String> args = List.of("--waterline.blobs.max-concurrent-transfers=" + FILES, "--waterline.blobs.max-transfers-per-user=" + FILES,
                "--waterline.blobs.transfer-wait=5m");
        try (ServerProcess server = ServerProcess.start(new ServerProcess.Launch(SmallHeapTransfersIntegrationTests.jar(), "-Xmx256m", args, 1),
                work); ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            String base = server.baseUrl();
            String token = JSON.readTree(http.send(HttpRequest.newBuilder(URI.create(base + "/api/dev/tokens"))
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString("{\"userId\":\"heap-sender\"}")).build(),
                    HttpResponse.BodyHandlers.ofString()).body()).get("token").asString();
            String chat = JSON.readTree(http.send(HttpRequest.newBuilder(URI.create(base + "/api/chats"))
                    .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"members\":[\"heap-friend\"]}")).build(),
                    HttpResponse.BodyHandlers.ofString()).body()).get("chatId").asString();

            List<CompletableFuture<String[]>> uploads = new ArrayList<>();
            for (int i = 0; i < FILES; i++) {
                long seed = 100 + i;
                uploads.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        MessageDigest digest = MessageDigest.getInstance("SHA-256");
                        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base + "/api/chats/" + chat
                                        + "/attachments?name=file-" + seed + ".bin"))
                                .header("Authorization", "Bearer " + token).header("Content-Type", "application/octet-stream")
                                .timeout(Duration.ofMinutes(3))
                                .POST(HttpRequest.BodyPublishers.fromPublisher(HttpRequest.BodyPublishers.ofInputStream(
                                        () -> new DigestInputStream(TransferBench.generated(seed, SIZE), digest)), SIZE))
                                .build(), HttpResponse.BodyHandlers.ofString());
                        assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
                        JsonNode attachment = JSON.readTree(r.body());
                        assertThat(attachment.get("size").asLong()).isEqualTo(SIZE);
                        assertThat(attachment.get("sha256").asString()).isEqualTo(HexFormat.of().formatHex(digest.digest()));
                        return new String[] {attachment.get("attachmentId").asString(), attachment.get("sha256").asString()};
                    }
                    catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }, pool));
            }
            List<String[]> stored = uploads.stream().map(CompletableFuture::join).toList();
            assertThat(server.alive()).isTrue();

            SmallHeapTransfersIntegrationTests.downloadAllAtOnce(http, pool, token,
                    stored.stream().map(a -> new String[] {base + "/api/attachments/" + a[0], a[1]}).toList(), SIZE);
            assertThat(server.alive()).as("no OutOfMemoryError ended it").isTrue();
            assertThat(http.send(HttpRequest.newBuilder(URI.create(base + "/actuator/health")).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
        }
    }
}
