package dev.waterline.config;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.apache.commons.logging.Log;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.logging.DeferredLogFactory;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import redis.embedded.RedisServer;

/**
 * The zero-configuration mode. When no {@code spring.datasource.url} is configured it starts an
 * embedded PostgreSQL, and when no {@code spring.data.redis.host}/{@code url} is configured an
 * embedded Redis, both keeping their data under {@code waterline.embedded.data-dir} (default
 * {@code ./data}) so that it survives a restart. When both are embedded (the zero-configuration
 * mode) dev tokens default to on and, unless one is configured, a JWT secret is generated once and
 * kept beside the data.
 *
 * <p>Servers are started once per JVM and per data directory and shared by every application
 * context in it (tests start several); they stop with the JVM. Properties are added with the
 * lowest precedence, so anything configured explicitly still wins.
 */
public class EmbeddedServers implements EnvironmentPostProcessor {

    private static final Map<Path, EmbeddedPostgres> POSTGRES = new ConcurrentHashMap<>();
    private static final Map<Path, RedisServer> REDIS = new ConcurrentHashMap<>();
    private static final Map<Path, Integer> REDIS_PORTS = new ConcurrentHashMap<>();

    private final Log log;

    public EmbeddedServers(DeferredLogFactory logs) {
        this.log = logs.getLog(EmbeddedServers.class);
    }

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment env, SpringApplication application) {
        if (!env.getProperty("waterline.embedded.enabled", Boolean.class, true)) {
            return;
        }
        boolean needPostgres = !env.containsProperty("spring.datasource.url");
        boolean needRedis = !env.containsProperty("spring.data.redis.host")
                && !env.containsProperty("spring.data.redis.url");
        if (!needPostgres && !needRedis) {
            return;
        }
        Path dataDir = Path.of(env.getProperty("waterline.embedded.data-dir", "./data")).toAbsolutePath().normalize();
        boolean clean = env.getProperty("waterline.embedded.clean", Boolean.class, false);
        Map<String, Object> props = new HashMap<>();
        if (needPostgres) {
            String database = env.getProperty("waterline.embedded.database", "waterline");
            EmbeddedPostgres pg = POSTGRES.computeIfAbsent(dataDir.resolve("postgres"), dir -> startPostgres(dir, clean));
            createDatabaseIfMissing(pg, database);
            props.put("spring.datasource.url", pg.getJdbcUrl("postgres", database));
            props.put("spring.datasource.username", "postgres");
            props.put("spring.datasource.password", "");
        }
        if (needRedis) {
            Path dir = dataDir.resolve("redis");
            REDIS.computeIfAbsent(dir, d -> startRedis(d, clean, log));
            props.put("spring.data.redis.host", "127.0.0.1");
            props.put("spring.data.redis.port", REDIS_PORTS.get(dir));
        }
        if (needPostgres && needRedis) {
            // the zero-configuration mode: nothing was configured, so make it usable at once
            props.put("waterline.auth.dev-tokens", true);
            if (!env.containsProperty("waterline.auth.jwt-secret")) {
                props.put("waterline.auth.jwt-secret", jwtSecret(dataDir));
            }
        }
        props.put("waterline.embedded.active", true);
        env.getPropertySources().addLast(new MapPropertySource("waterlineEmbedded", props));
    }

    /**
     * The embedded PostgreSQL for {@code dataDir}, started if need be, with {@code database}
     * created in it; returns its port. For tests that must reach it through a proxy of their own.
     */
    public static int postgresPort(Path dataDir, boolean clean, String database) {
        Path dir = dataDir.toAbsolutePath().normalize().resolve("postgres");
        EmbeddedPostgres pg = POSTGRES.computeIfAbsent(dir, d -> startPostgres(d, clean, null));
        createDatabaseIfMissing(pg, database);
        return pg.getPort();
    }

    /** The embedded Redis for {@code dataDir}, started if need be; returns its port. For tests that proxy it. */
    public static int redisPort(Path dataDir, boolean clean) {
        Path dir = dataDir.toAbsolutePath().normalize().resolve("redis");
        REDIS.computeIfAbsent(dir, d -> startRedis(d, clean, null));
        return REDIS_PORTS.get(dir);
    }

    private EmbeddedPostgres startPostgres(Path dir, boolean clean) {
        return startPostgres(dir, clean, log);
    }

    private static EmbeddedPostgres startPostgres(Path dir, boolean clean, Log log) {
        try {
            Files.createDirectories(dir.getParent());
            if (log != null) {
                log.info("Starting embedded PostgreSQL with data in " + dir);
            }
            EmbeddedPostgres pg = EmbeddedPostgres.builder()
                    .setDataDirectory(dir)
                    .setCleanDataDirectory(clean)
                    .setPGStartupWait(Duration.ofSeconds(60))
                    .setServerConfig("max_connections", "200")
                    // The library starts PostgreSQL for tests: with -F (fsync off) and
                    // synchronous_commit=off, so a commit returns before its WAL is on disk and
                    // `accepted` would be answered for a message a crash can still take.
                    // Waterline answers only after a durable commit, so the embedded server
                    // commits like any other (a -c after -F wins).
                    .setServerConfig("fsync", "on")
                    .setServerConfig("synchronous_commit", "on")
                    .start();
            if (log != null) {
                log.info("Embedded PostgreSQL listening on 127.0.0.1:" + pg.getPort());
            }
            return pg;
        }
        catch (IOException e) {
            throw new UncheckedIOException("Could not start embedded PostgreSQL in " + dir, e);
        }
    }

    private static void createDatabaseIfMissing(EmbeddedPostgres pg, String database) {
        if (!database.matches("[a-z_][a-z0-9_]{0,62}")) {
            throw new IllegalArgumentException("waterline.embedded.database must be a plain lower-case name: " + database);
        }
        try (Connection c = DriverManager.getConnection(pg.getJdbcUrl("postgres", "postgres"), "postgres", "");
             PreparedStatement exists = c.prepareStatement("SELECT 1 FROM pg_database WHERE datname = ?")) {
            exists.setString(1, database);
            try (ResultSet rs = exists.executeQuery()) {
                if (!rs.next()) {
                    c.createStatement().execute("CREATE DATABASE " + database);
                }
            }
        }
        catch (SQLException e) {
            throw new IllegalStateException("Could not create embedded database " + database, e);
        }
    }

    private static RedisServer startRedis(Path dir, boolean clean, Log log) {
        try {
            if (clean && Files.exists(dir)) {
                try (var files = Files.list(dir)) {
                    for (Path f : files.toList()) {
                        Files.deleteIfExists(f);
                    }
                }
            }
            Files.createDirectories(dir);
            int port;
            try (ServerSocket socket = new ServerSocket(0)) {
                port = socket.getLocalPort();
            }
            RedisServer redis = RedisServer.newRedisServer()
                    .port(port)
                    .bind("127.0.0.1")
                    .setting("dir " + dir)
                    .setting("appendonly yes")
                    .setting("save \"\"")
                    .setting("daemonize no")
                    .onShutdownForceStop(true)
                    .build();
            redis.start();
            REDIS_PORTS.put(dir, port);
            if (log != null) {
                log.info("Embedded Redis listening on 127.0.0.1:" + port + " with data in " + dir);
            }
            return redis;
        }
        catch (IOException e) {
            throw new UncheckedIOException("Could not start embedded Redis in " + dir, e);
        }
    }

    /** A per-installation secret, generated once so that dev tokens survive a restart. */
    private static String jwtSecret(Path dataDir) {
        Path file = dataDir.resolve("jwt-secret");
        try {
            if (Files.exists(file)) {
                return Files.readString(file, StandardCharsets.UTF_8).strip();
            }
            Files.createDirectories(dataDir);
            byte[] bytes = new byte[48];
            new SecureRandom().nextBytes(bytes);
            String secret = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
            Files.writeString(file, secret, StandardCharsets.UTF_8);
            try {
                Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
            }
            catch (UnsupportedOperationException ignored) {
                // not a POSIX file system: the file keeps the default permissions
            }
            return secret;
        }
        catch (IOException e) {
            throw new UncheckedIOException("Could not read or write " + file, e);
        }
    }
}
