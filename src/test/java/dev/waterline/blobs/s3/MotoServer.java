package dev.waterline.blobs.s3;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import static org.awaitility.Awaitility.await;

/**
 * An S3-compatible server for the tests, started once per JVM: moto's server mode (PyPI
 * {@code moto[server]}), run as {@code moto_server} or {@code python3 -m moto.server} on a free
 * loopback port, its log under {@code target/}. Where neither is installed, {@link #get()} is empty
 * and says why ({@link #missing}), so that the tests that need it are skipped with that reason.
 */
final class MotoServer {

    static final String MISSING = "no S3-compatible server on this machine: neither moto_server nor python3 -m moto.server"
            + " runs (pip install 'moto[server]'; target/moto-*.log has the output of one that failed to start);"
            + " the object store's tests are skipped";

    private static Optional<MotoServer> started;

    final String url;
    private final Process process;

    private MotoServer(String url, Process process) {
        this.url = url;
        this.process = process;
    }

    /** The server, started on first use; empty when it cannot run here. */
    static synchronized Optional<MotoServer> get() {
        if (started == null) {
            started = start();
        }
        return started;
    }

    /** The URL to give the store: the server's, or one nothing answers when there is none (its tests are skipped). */
    static String urlOrNone() {
        return get().map(m -> m.url).orElse("http://127.0.0.1:9");
    }

    private static Optional<MotoServer> start() {
        List<String> command = onPath("moto_server") ? List.of("moto_server")
                : pythonHasMoto() ? List.of("python3", "-m", "moto.server") : null;
        if (command == null) {
            return Optional.empty();
        }
        try {
            int port;
            try (ServerSocket s = new ServerSocket(0)) {
                port = s.getLocalPort();
            }
            Path log = Path.of("target", "moto-" + port + ".log");
            Files.createDirectories(log.getParent());
            List<String> args = new java.util.ArrayList<>(command);
            args.addAll(List.of("-H", "127.0.0.1", "-p", Integer.toString(port)));
            Process p = new ProcessBuilder(args).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            Runtime.getRuntime().addShutdownHook(new Thread(p::destroy));
            String url = "http://127.0.0.1:" + port;
            HttpClient http = HttpClient.newHttpClient();
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).ignoreExceptions().until(() -> {
                if (!p.isAlive()) {
                    throw new IllegalStateException("moto exited; see " + log);
                }
                return http.send(HttpRequest.newBuilder(URI.create(url + "/")).build(), HttpResponse.BodyHandlers.discarding())
                        .statusCode() == 200;
            });
            return Optional.of(new MotoServer(url, p));
        }
        catch (IOException | RuntimeException cannotRun) {
            // installed but not running (a shim without the package, a port taken): as if absent, the log says why
            return Optional.empty();
        }
    }

    private static boolean onPath(String program) {
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String dir : path.split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(dir, program))) {
                return true;
            }
        }
        return false;
    }

    private static boolean pythonHasMoto() {
        try {
            Process p = new ProcessBuilder("python3", "-c", "import moto.server").redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            return p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS) && p.exitValue() == 0;
        }
        catch (IOException e) {
            return false;
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    boolean alive() {
        return process.isAlive();
    }
}
