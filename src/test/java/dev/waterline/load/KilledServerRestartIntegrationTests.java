package dev.waterline.load;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import dev.waterline.load.deployment.ServerProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The packaged server in the zero-configuration mode, killed with SIGKILL (its JVM only, as the
 * OOM killer would) and started again on the same data: its embedded PostgreSQL and Redis outlive
 * the JVM, and the next start stops them and comes up on the same data, where it used to fail
 * after a minute; a second server on a folder in use is refused at once. The jar is the one
 * {@code package} built before the integration tests run.
 */
class KilledServerRestartIntegrationTests {

    private static Path jar() throws Exception {
        try (Stream<Path> files = Files.list(Path.of("target"))) {
            return files.filter(f -> f.getFileName().toString().matches("waterline-.*\\.jar")).findFirst()
                    .orElseThrow(() -> new IllegalStateException("no server jar in target/: the package phase makes it"));
        }
    }

    private static Optional<ProcessHandle> live(Path pidFile) throws Exception {
        if (!Files.exists(pidFile)) {
            return Optional.empty();
        }
        long pid = Long.parseLong(Files.readAllLines(pidFile).getFirst().strip());
        return ProcessHandle.of(pid).filter(ProcessHandle::isAlive);
    }

    @Test
    void aServerKilledWithItsDatabasesLeftRunningStartsAgainOnTheSameDataAndASecondOneIsRefused(@TempDir Path work) throws Exception {
        ServerProcess.Launch launch = new ServerProcess.Launch(jar(), "-Xmx256m", List.of(), 1);
        HttpClient http = HttpClient.newHttpClient();
        ServerProcess first = ServerProcess.start(launch, work);
        String token;
        String chatId;
        try {
            HttpResponse<String> t = http.send(HttpRequest.newBuilder(URI.create(first.baseUrl() + "/api/dev/tokens"))
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString("{\"userId\":\"kim\"}")).build(),
                    HttpResponse.BodyHandlers.ofString());
            token = t.body().replaceAll(".*\"token\":\"([^\"]+)\".*", "$1");
            HttpResponse<String> chat = http.send(HttpRequest.newBuilder(URI.create(first.baseUrl() + "/api/chats"))
                    .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"members\":[\"lee\"]}")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(chat.statusCode()).isEqualTo(201);
            chatId = chat.body().replaceAll(".*\"chatId\":\"([^\"]+)\".*", "$1");
        }
        finally {
            first.kill();
        }
        Path data = work.resolve("data");
        Optional<ProcessHandle> postgres = live(data.resolve("postgres/postmaster.pid"));
        Optional<ProcessHandle> redis = live(data.resolve("redis/redis.pid"));
        try {
            assertThat(postgres).as("the killed JVM's PostgreSQL outlives it").isPresent();
            assertThat(redis).as("and so does its Redis").isPresent();
            restartAndRefuseASecond(launch, work, http, token, chatId, postgres.get(), redis.get());
        }
        finally {
            // whatever failed, nothing of this test stays running on the machine
            postgres.ifPresent(ProcessHandle::destroyForcibly);
            redis.ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    private static void restartAndRefuseASecond(ServerProcess.Launch launch, Path work, HttpClient http, String token, String chatId,
                                                ProcessHandle postgres, ProcessHandle redis) throws Exception {
        try (ServerProcess again = ServerProcess.start(launch, work)) {
            assertThat(postgres.isAlive()).as("the orphaned PostgreSQL was stopped").isFalse();
            assertThat(redis.isAlive()).as("the orphaned Redis was stopped").isFalse();
            HttpResponse<String> chat = http.send(HttpRequest.newBuilder(URI.create(again.baseUrl() + "/api/chats/" + chatId))
                    .header("Authorization", "Bearer " + token).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(chat.statusCode()).as("the same data, and the same secret: " + chat.body()).isEqualTo(200);

            assertThatThrownBy(() -> ServerProcess.start(launch, work)).hasMessageContaining("exited during start");
            assertThat(Files.readString(work.resolve("server.log")))
                    .as("the refused second server says why").contains("is in use by another running Waterline");
            HttpResponse<String> still = http.send(HttpRequest.newBuilder(URI.create(again.baseUrl() + "/api/chats/" + chatId))
                    .header("Authorization", "Bearer " + token).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(still.statusCode()).as("the refused start touched nothing of the running server").isEqualTo(200);
        }
    }
}
