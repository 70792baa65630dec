package dev.waterline.support;

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
import java.util.List;

import dev.waterline.WaterlineApplication;
import dev.waterline.config.EmbeddedServers;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.awaitility.Awaitility.await;

/**
 * Several Waterline nodes on one PostgreSQL database and one Redis database (PROTOCOL.md §8), as
 * a test starts them: application contexts of their own in this JVM, on ports of their own, over
 * the shared embedded servers; or a node in a process of its own, which a test can kill with
 * SIGKILL (no graceful stop, no last heartbeat). Timings are short so that a node's death is
 * noticed within seconds: node timeout 3 s, heartbeats every 500 ms, reclaim every 200 ms with a
 * 2 s grace, Redis commands timing out after 1 s, a 4 s lease. Each cluster starts on an empty
 * Redis database of its own, and a node started here is handed back once it trusts its part of
 * the index (so a test begins with the cluster settled).
 */
public final class Cluster implements AutoCloseable {

    public static final Path DATA = EmbeddedData.DIR;
    public static final Duration NODE_TIMEOUT = Duration.ofSeconds(3);

    private final String database;
    private final int redisDatabase;
    private final List<ConfigurableApplicationContext> contexts = new ArrayList<>();
    private final List<Process> processes = new ArrayList<>();
    /** One secret for every node of this cluster, so that a token from any node is good on all. */
    private final String secret = java.util.UUID.randomUUID() + "-" + java.util.UUID.randomUUID();

    public Cluster(String database, int redisDatabase) {
        this.database = database;
        this.redisDatabase = redisDatabase;
        // what a run before this one left in this Redis database (a node that never left) would
        // be swept in the middle of this one
        var factory = new org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory(
                new org.springframework.data.redis.connection.RedisStandaloneConfiguration("127.0.0.1",
                        EmbeddedServers.redisPort(DATA, true)));
        factory.setDatabase(redisDatabase);
        factory.afterPropertiesSet();
        factory.start();
        try (var c = factory.getConnection()) {
            c.serverCommands().flushDb();
        }
        finally {
            factory.destroy();
        }
    }

    private List<String> common(String nodeId) {
        return new ArrayList<>(List.of(
                "--waterline.cluster.enabled=true",
                "--waterline.cluster.node-id=" + nodeId,
                "--waterline.cluster.node-timeout=" + NODE_TIMEOUT.toMillis() + "ms",
                "--waterline.cluster.heartbeat-interval=500ms",
                "--waterline.cluster.evict-timeout=2s",
                "--waterline.reclaim.interval=200ms",
                "--waterline.reclaim.grace=2s",
                "--waterline.delivery.lease=4s",
                "--spring.data.redis.timeout=1s",
                "--waterline.auth.jwt-secret=" + secret,
                "--spring.data.redis.database=" + redisDatabase));
    }

    /** A node in this JVM. */
    public ConfigurableApplicationContext start(String nodeId, String... extra) {
        List<String> args = common(nodeId);
        args.add("--server.port=0");
        args.add("--waterline.embedded.database=" + database);
        args.addAll(List.of(extra));
        ConfigurableApplicationContext ctx = new SpringApplicationBuilder(WaterlineApplication.class).profiles("test")
                .run(args.toArray(String[]::new));
        contexts.add(ctx);
        var health = ctx.getBean(dev.waterline.watermark.IndexHealth.class);
        await().atMost(Duration.ofSeconds(20)).until(() -> health.trustedGeneration() >= 0);
        return ctx;
    }

    public static int port(ConfigurableApplicationContext ctx) {
        return ((WebServerApplicationContext) ctx).getWebServer().getPort();
    }

    /** A node in a process of its own, ready when this returns; {@link #kill} ends it with SIGKILL. */
    public Node startProcess(String nodeId, String... extra) throws IOException {
        int pg = EmbeddedServers.postgresPort(DATA, true, database);
        int redis = EmbeddedServers.redisPort(DATA, true);
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:+ExitOnOutOfMemoryError", "-cp", classPath(), WaterlineApplication.class.getName()));
        cmd.addAll(common(nodeId));
        cmd.addAll(List.of(
                "--spring.profiles.active=test",
                "--server.port=" + port,
                "--server.address=127.0.0.1",
                "--spring.datasource.url=jdbc:postgresql://127.0.0.1:" + pg + "/" + database,
                "--spring.datasource.username=postgres",
                "--spring.datasource.password=",
                "--spring.data.redis.host=127.0.0.1",
                "--spring.data.redis.port=" + redis,
                "--waterline.auth.dev-tokens=true"));
        cmd.addAll(List.of(extra));
        Path log = Files.createDirectories(Path.of("target/cluster-nodes")).resolve(nodeId + ".log");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        processes.add(p);
        HttpClient http = HttpClient.newHttpClient();
        await().atMost(Duration.ofSeconds(90)).until(() -> {
            if (!p.isAlive()) {
                throw new IllegalStateException("node " + nodeId + " exited (" + p.exitValue() + "); see " + log);
            }
            try {
                return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/health/readiness")).build(),
                        HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
            }
            catch (IOException notYet) {
                return false;
            }
        });
        return new Node(nodeId, port, p);
    }

    /** The classpath the tests run with (failsafe passes it apart when the JVM's own is a manifest jar). */
    private static String classPath() {
        String cp = System.getProperty("surefire.test.class.path");
        return cp != null && !cp.isBlank() ? cp : System.getProperty("java.class.path");
    }

    /** A node in its own process. */
    public record Node(String id, int port, Process process) {
    }

    /** Ends a node's process at once: SIGKILL, no shutdown hook, no last word to Redis. */
    public static void kill(Node node) throws InterruptedException {
        node.process().destroyForcibly();
        node.process().waitFor();
    }

    public static JdbcTemplate jdbc(ConfigurableApplicationContext ctx) {
        return ctx.getBean(JdbcTemplate.class);
    }

    public static StringRedisTemplate redis(ConfigurableApplicationContext ctx) {
        return ctx.getBean(StringRedisTemplate.class);
    }

    @Override
    public void close() {
        for (Process p : processes) {
            p.destroyForcibly();
        }
        for (ConfigurableApplicationContext ctx : contexts) {
            ctx.close();
        }
    }
}
