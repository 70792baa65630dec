package dev.waterline.load.deployment;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import dev.waterline.load.run.LoadConfig;
import picocli.CommandLine;

/**
 * A Waterline server the harness starts itself: the packaged jar (run from its extracted layout,
 * {@link ExtractedJar}) in the zero-configuration mode
 * (embedded PostgreSQL and Redis, dev tokens), on a free loopback port, with its data in a fresh
 * folder, in its own JVM so that its heap and RSS are its own. For a cluster run the first node
 * is started so, with the cluster on, and every further node ({@link #peer}) on the first one's
 * PostgreSQL and Redis, with its secret.
 */
public final class ServerProcess implements AutoCloseable {

    private final Process process;
    private final String baseUrl;
    private final Path log;
    private final Path dataDir;
    private final List<String> command;

    private ServerProcess(Process process, String baseUrl, Path log, Path dataDir, List<String> command) {
        this.process = process;
        this.baseUrl = baseUrl;
        this.log = log;
        this.dataDir = dataDir;
        this.command = command;
    }

    /** --server-jar's default: the packaged server jar, whatever version the build gave it. */
    public static final String DEFAULT_JAR = "target/waterline-*.jar";

    /**
     * --server-jar: a path, or a file name with {@code *} or {@code ?} standing for the most recently
     * modified jar it matches (a jar of an earlier version may still lie beside the current one in
     * {@code target/}). A pattern that matches nothing is kept as it is, and starting the server then
     * says that there is no jar.
     */
    public static final class JarConverter implements CommandLine.ITypeConverter<Path> {
        @Override
        public Path convert(String value) throws IOException {
            Path given = Path.of(value);
            String name = given.getFileName().toString();
            Path dir = given.getParent() == null ? Path.of(".") : given.getParent();
            if (!name.contains("*") && !name.contains("?") || !Files.isDirectory(dir)) {
                return given;
            }
            var matcher = dir.getFileSystem().getPathMatcher("glob:" + name);
            try (Stream<Path> files = Files.list(dir)) {
                return files.filter(f -> matcher.matches(f.getFileName()) && Files.isRegularFile(f))
                        .max(Comparator.comparing(f -> f.toFile().lastModified()))
                        .orElse(given);
            }
        }
    }

    /** What to start: the jar, its JVM options, extra server arguments, and how many nodes the run has. */
    public record Launch(Path serverJar, String serverJvmOpts, List<String> serverArgs, int nodes) {
    }

    public static ServerProcess start(LoadConfig cfg, Path workDir) throws IOException, InterruptedException {
        return start(launch(cfg), workDir);
    }

    public static ServerProcess peer(LoadConfig cfg, Path workDir, ServerProcess first) throws IOException, InterruptedException {
        return peer(launch(cfg), workDir, first);
    }

    private static Launch launch(LoadConfig cfg) {
        return new Launch(cfg.serverJar(), cfg.serverJvmOpts(), cfg.serverArgs(), cfg.nodes());
    }

    public static ServerProcess start(Launch cfg, Path workDir) throws IOException, InterruptedException {
        return startWith(cfg, workDir, cfg.nodes() > 1 ? List.of("--waterline.cluster.enabled=true") : List.of());
    }

    /** A further node of the cluster {@code first} started: on its PostgreSQL and Redis, with its secret. */
    public static ServerProcess peer(Launch cfg, Path workDir, ServerProcess first) throws IOException, InterruptedException {
        String pg = first.embeddedPostgres();
        String redis = first.embeddedRedis();
        if (pg == null || redis == null) {
            throw new IllegalStateException("the first node's log names no embedded PostgreSQL or Redis: " + first.log);
        }
        String secret = first.jwtSecret();
        return startWith(cfg, workDir, List.of(
                "--waterline.cluster.enabled=true",
                "--spring.datasource.url=jdbc:postgresql://" + pg + "/waterline",
                "--spring.datasource.username=postgres",
                "--spring.datasource.password=",
                "--spring.data.redis.host=" + redis.substring(0, redis.lastIndexOf(':')),
                "--spring.data.redis.port=" + redis.substring(redis.lastIndexOf(':') + 1),
                "--waterline.auth.jwt-secret=" + secret,
                "--waterline.auth.dev-tokens=true"));
    }

    /** A node with these arguments of its own, e.g. the PostgreSQL and Redis of a deployment started elsewhere. */
    static ServerProcess startWith(Launch cfg, Path workDir, List<String> nodeArgs) throws IOException, InterruptedException {
        if (!Files.exists(cfg.serverJar())) {
            throw new IllegalStateException("no server jar at " + cfg.serverJar() + ": run ./mvnw -DskipTests package first");
        }
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        Files.createDirectories(workDir);
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = new ArrayList<>();
        cmd.add(java);
        // As every launcher of the server does: an OutOfMemoryError ends the process at once.
        cmd.add("-XX:+ExitOnOutOfMemoryError");
        for (String opt : cfg.serverJvmOpts().trim().split("\\s+")) {
            if (!opt.isEmpty()) {
                cmd.add(opt);
            }
        }
        cmd.add("-jar");
        cmd.add(ExtractedJar.of(cfg.serverJar()).toString());
        cmd.add("--server.port=" + port);
        cmd.add("--server.address=127.0.0.1");
        Path dataDir = workDir.resolve("data").toAbsolutePath();
        cmd.add("--waterline.embedded.data-dir=" + dataDir);
        cmd.addAll(nodeArgs);
        // Every simulated client connects from this one address, and the set-up mints every
        // client's token from it: the per-address connection cap and the REST rate limit, made
        // for many clients on many addresses, are lifted unless the run sets them itself.
        lift(cmd, cfg.serverArgs(), "--waterline.gateway.max-connections-per-address", "0");
        lift(cmd, cfg.serverArgs(), "--waterline.api.requests-per-second", "1000000");
        lift(cmd, cfg.serverArgs(), "--waterline.api.burst", "1000000");
        cmd.addAll(cfg.serverArgs());
        return launch(List.copyOf(cmd), "http://127.0.0.1:" + port, workDir.resolve("server.log"), dataDir);
    }

    private static ServerProcess launch(List<String> cmd, String base, Path log, Path dataDir) throws IOException, InterruptedException {
        // appended: a restart on the same folder keeps the earlier log, and two starts at once interleave lines, not bytes
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        ServerProcess server = new ServerProcess(p, base, log, dataDir, cmd);
        try {
            server.awaitReady(Duration.ofSeconds(180));
        }
        catch (RuntimeException | InterruptedException e) {
            // a server that did not come up is not left running behind the harness's back
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw e;
        }
        return server;
    }

    /** The same server again (same command, port, data and log) after this one ended, as a supervisor restarts it. */
    ServerProcess restart() throws IOException, InterruptedException {
        if (process.isAlive()) {
            throw new IllegalStateException("the server at " + baseUrl + " is still running");
        }
        return launch(command, baseUrl, log, dataDir);
    }

    public boolean alive() {
        return process.isAlive();
    }

    Path log() {
        return log;
    }

    private static void lift(List<String> cmd, List<String> given, String option, String value) {
        if (given.stream().noneMatch(a -> a.startsWith(option + "="))) {
            cmd.add(option + "=" + value);
        }
    }

    public String baseUrl() {
        return baseUrl;
    }

    /** The secret the zero-configuration mode made for its tokens (in its data folder). */
    public String jwtSecret() throws IOException {
        return Files.readString(dataDir.resolve("jwt-secret")).strip();
    }

    /** host:port of the embedded PostgreSQL the server started, as its log names it last (the log is appended to); null if none. */
    public String embeddedPostgres() throws IOException {
        return last("Embedded PostgreSQL listening on (\\S+):(\\d+)");
    }

    private String last(String pattern) throws IOException {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(pattern).matcher(Files.readString(log));
        String found = null;
        while (m.find()) {
            found = m.group(1) + ":" + m.group(2);
        }
        return found;
    }

    /** host:port of the embedded Redis the server started, as its log names it last; null if none. */
    public String embeddedRedis() throws IOException {
        return last("Embedded Redis listening on (\\S+):(\\d+)");
    }

    /** Ends the process at once: SIGKILL, no graceful stop, no last heartbeat. */
    public void kill() throws InterruptedException {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }

    /** The folder of the embedded PostgreSQL and Redis (the zero-configuration mode's data). */
    public Path dataDir() {
        return dataDir;
    }

    public long pid() {
        return process.pid();
    }

    /** Resident set size in bytes, from /proc; -1 where there is none. */
    public long rssBytes() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + process.pid() + "/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("\\D+", "")) * 1024;
                }
            }
        }
        catch (IOException | NumberFormatException e) {
            // not Linux, or the process is gone
        }
        return -1;
    }

    private void awaitReady(Duration timeout) throws InterruptedException {
        HttpClient http = HttpClient.newHttpClient();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("the server exited during start; see " + log);
            }
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(baseUrl + "/actuator/health/readiness"))
                        .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    return;
                }
            }
            catch (IOException e) {
                // not listening yet
            }
            TimeUnit.MILLISECONDS.sleep(250);
        }
        throw new IllegalStateException("the server was not ready within " + timeout + "; see " + log);
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
