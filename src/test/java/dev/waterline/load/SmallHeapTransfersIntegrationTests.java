package dev.waterline.load;

import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
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
import java.util.stream.Stream;

import dev.waterline.load.bench.TransferBench;
import dev.waterline.load.deployment.ServerProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Twenty uploads of the largest blob a stream takes (32 MiB), all at once, then twenty downloads
 * of them, all at once, against the packaged server with a 256 MB heap: every one succeeds, byte for
 * byte, and the server is still up. Before blobs were stored and served a part at a time, fourteen
 * such uploads ran a 512 MB heap out (each body was read whole, then copied), and twelve slow
 * downloads of one blob caused six {@code OutOfMemoryError}s. The server runs with
 * {@code -XX:+ExitOnOutOfMemoryError}, as the harness starts it: running out would end it.
 */
class SmallHeapTransfersIntegrationTests {

    static final JsonMapper JSON = JsonMapper.builder().build();
    static final int FILES = 20;
    static final long SIZE = 32L * 1024 * 1024;

    private static Path jar() throws Exception {
        try (Stream<Path> files = Files.list(Path.of("target"))) {
            return files.filter(f -> f.getFileName().toString().matches("waterline-.*\\.jar")).findFirst()
                    .orElseThrow(() -> new IllegalStateException("no server jar in target/: the package phase makes it"));
        }
    }

    @Test
    void twentyMaximumSizeUploadsAndThenTwentyDownloadsAtOnceAllSucceedWithA256MbHeap(@TempDir Path work) throws Exception {
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        // all twenty at once: every transfer turn open to them, none waiting (the default is 16 turns, 4 a user)
        List<String> args = List.of("--waterline.blobs.max-concurrent-transfers=" + FILES, "--waterline.blobs.max-transfers-per-user=" + FILES,
                "--waterline.blobs.transfer-wait=5m");
        try (ServerProcess server = ServerProcess.start(new ServerProcess.Launch(jar(), "-Xmx256m", args, 1), work);
             ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            String base = server.baseUrl();
            String token = JSON.readTree(http.send(HttpRequest.newBuilder(URI.create(base + "/api/dev/tokens"))
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString("{\"userId\":\"heap-bot\"}")).build(),
                    HttpResponse.BodyHandlers.ofString()).body()).get("token").asString();
            String chat = JSON.readTree(http.send(HttpRequest.newBuilder(URI.create(base + "/api/chats"))
                    .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"members\":[\"heap-reader\"]}")).build(),
                    HttpResponse.BodyHandlers.ofString()).body()).get("chatId").asString();
            String stream = JSON.readTree(http.send(HttpRequest.newBuilder(URI.create(base + "/api/chats/" + chat + "/streams"))
                    .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString()).body())
                    .get("streamId").asString();

            List<CompletableFuture<String[]>> uploads = new ArrayList<>();
            for (int i = 0; i < FILES; i++) {
                long seed = i;
                uploads.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        MessageDigest digest = MessageDigest.getInstance("SHA-256");
                        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base + "/api/streams/" + stream + "/blobs"))
                                .header("Authorization", "Bearer " + token).header("Content-Type", "application/octet-stream")
                                .timeout(Duration.ofMinutes(3))
                                .POST(HttpRequest.BodyPublishers.fromPublisher(HttpRequest.BodyPublishers.ofInputStream(
                                        () -> new DigestInputStream(TransferBench.generated(seed, SIZE), digest)), SIZE)).build(),
                                HttpResponse.BodyHandlers.ofString());
                        assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
                        JsonNode blob = JSON.readTree(r.body());
                        assertThat(blob.get("size").asLong()).isEqualTo(SIZE);
                        assertThat(blob.get("sha256").asString()).isEqualTo(HexFormat.of().formatHex(digest.digest()));
                        return new String[] {blob.get("blobId").asString(), blob.get("sha256").asString()};
                    }
                    catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }, pool));
            }
            List<String[]> stored = uploads.stream().map(CompletableFuture::join).toList();
            assertThat(server.alive()).isTrue();

            List<CompletableFuture<Void>> downloads = new ArrayList<>();
            for (String[] blob : stored) {
                downloads.add(CompletableFuture.runAsync(() -> {
                    try {
                        HttpResponse<InputStream> r = http.send(HttpRequest.newBuilder(URI.create(base + "/api/blobs/" + blob[0]))
                                .header("Authorization", "Bearer " + token).timeout(Duration.ofMinutes(3)).build(),
                                HttpResponse.BodyHandlers.ofInputStream());
                        assertThat(r.statusCode()).isEqualTo(200);
                        MessageDigest digest = MessageDigest.getInstance("SHA-256");
                        long read = 0;
                        try (InputStream in = r.body()) {
                            byte[] buffer = new byte[64 * 1024];
                            for (int n; (n = in.read(buffer)) > 0; ) {
                                digest.update(buffer, 0, n);
                                read += n;
                            }
                        }
                        assertThat(read).isEqualTo(SIZE);
                        assertThat(HexFormat.of().formatHex(digest.digest())).isEqualTo(blob[1]);
                    }
                    catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }, pool));
            }
            downloads.forEach(CompletableFuture::join);
            assertThat(server.alive()).as("no OutOfMemoryError ended it").isTrue();
            assertThat(http.send(HttpRequest.newBuilder(URI.create(base + "/actuator/health")).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
        }
    }
}
