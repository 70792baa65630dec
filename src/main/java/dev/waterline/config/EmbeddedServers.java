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
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.apache.commons.logging.Log;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.ConfigurationPropertyState;
import org.springframework.boot.logging.DeferredLogFactory;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import redis.embedded.RedisServer;

/**
 * The zero-configuration mode. When no PostgreSQL is named in any form the configuration knows
 * ({@link #POSTGRES_NAMES}: {@code spring.datasource.url}, {@code spring.datasource.hikari.jdbc-url},
 * a JNDI name, a data source class or properties, Flyway's own URL; from any property source,
 * environment variables in their relaxed form included) it starts an embedded PostgreSQL, and
 * when no Redis is named ({@link #REDIS_NAMES}) an embedded Redis, both keeping their data under
 * {@code waterline.embedded.data-dir} (default {@code ./data}) so that it survives a restart.
 * Only when both are embedded (the zero-configuration mode) do dev tokens default to on, is a JWT
 * secret generated once and kept beside the data (unless one is configured), and does the server
 * listen on loopback only (unless {@code server.address} is set): a server that hands out tokens
 * for any user must not be reachable from another machine by accident.
 *
 * <p>Servers are started once per JVM and per data directory and shared by every application
 * context in it (tests start several); they stop with the JVM. Properties are added with the
 * lowest precedence, so anything configured explicitly still wins.
 */
public class EmbeddedServers implements EnvironmentPostProcessor {

    static final String PROPERTY_SOURCE = "waterlineEmbedded";

    private static final Map<Path, EmbeddedPostgres> POSTGRES = new ConcurrentHashMap<>();
    private static final Map<Path, RedisServer> REDIS = new ConcurrentHashMap<>();
    private static final Map<Path, Integer> REDIS_PORTS = new ConcurrentHashMap<>();

    private final Log log;

    public EmbeddedServers(DeferredLogFactory logs) {
        this.log = logs.getLog(EmbeddedServers.class);
    }

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment env, SpringApplication application) {
        boolean needPostgres = !named(env, POSTGRES_NAMES);
        boolean needRedis = !named(env, REDIS_NAMES);
        Map<String, Object> props = new HashMap<>();
        if (!needPostgres && !named(env, List.of("spring.datasource.url"))) {
            // Named through Hikari's own jdbc-url only: Spring Boot still wants spring.datasource.url
            // (it would otherwise look for an embedded database to create), so it gets the same one.
            String hikari = org.springframework.boot.context.properties.bind.Binder.get(env)
                    .bind("spring.datasource.hikari.jdbc-url", String.class).orElse(null);
            if (hikari != null) {
                props.put("spring.datasource.url", hikari);
            }
        }
        if (!needPostgres && !needRedis) {
            // PostgreSQL and Redis are both external: other nodes may share them (PROTOCOL.md §8),
            // unless the configuration says this node is the only one
            props.put("waterline.cluster.enabled", true);
        }
        if (needPostgres != needRedis && env.getProperty("waterline.embedded.enabled", Boolean.class, true)) {
            // PROTOCOL.md §1: naming either turns the embedded servers off. An embedded server
            // started beside a real one (a Redis with no password for a production database) is
            // never what a deployment wants, nor a default one on localhost that happens to answer.
            throw new IllegalStateException((needRedis ? "PostgreSQL is named but Redis is not" : "Redis is named but PostgreSQL is not")
                    + ": name both (spring.datasource.url and spring.data.redis.host, or their environment variables),"
                    + " or neither for the zero-configuration mode with embedded servers");
        }
        if ((!needPostgres && !needRedis) || !env.getProperty("waterline.embedded.enabled", Boolean.class, true)) {
            if (!props.isEmpty()) {
                env.getPropertySources().addLast(new MapPropertySource(PROPERTY_SOURCE, props));
            }
            return;
        }
        Path dataDir = Path.of(env.getProperty("waterline.embedded.data-dir", "./data")).toAbsolutePath().normalize();
        boolean clean = env.getProperty("waterline.embedded.clean", Boolean.class, false);
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
            // the zero-configuration mode: nothing was configured, so make it usable at once, on
            // this machine only
            props.put("waterline.auth.dev-tokens", true);
            props.put("waterline.web.home-page", true);
            props.put("waterline.streams.dev-bots", true);
            props.put("waterline.embedded.zero-config", true);
            if (!named(env, List.of("server.address"))) {
                props.put("server.address", "127.0.0.1");
            }
            if (!env.containsProperty("waterline.auth.jwt-secret")) {
                props.put("waterline.auth.jwt-secret", jwtSecret(dataDir));
            }
        }
        props.put("waterline.embedded.active", true);
        env.getPropertySources().addLast(new MapPropertySource(PROPERTY_SOURCE, props));
    }

    /** Properties any one of which names a PostgreSQL (exactly, or as the prefix of a group). */
    static final List<String> POSTGRES_NAMES = List.of(
            "spring.datasource.url", "spring.datasource.jndi-name",
            "spring.datasource.hikari.jdbc-url", "spring.datasource.hikari.data-source-class-name",
            "spring.datasource.hikari.data-source-j-n-d-i", "spring.datasource.hikari.data-source-properties",
            "spring.flyway.url");

    /** Properties any one of which names a Redis (exactly, or as the prefix of a group). */
    static final List<String> REDIS_NAMES = List.of(
            "spring.data.redis.host", "spring.data.redis.port", "spring.data.redis.url",
            "spring.data.redis.sentinel", "spring.data.redis.cluster");

    /**
     * Whether the effective configuration sets any of {@code names} or anything under one:
     * asked through Spring Boot's configuration property sources, so that every spelling of a
     * name counts ({@code SPRING_DATASOURCE_HIKARI_JDBC_URL} as much as
     * {@code spring.datasource.hikari.jdbc-url}). This module's own defaults do not count.
     */
    static boolean named(ConfigurableEnvironment env, List<String> names) {
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(env)) {
            if (source.getUnderlyingSource() == env.getPropertySources().get(PROPERTY_SOURCE)) {
                continue;
            }
            for (String name : names) {
                ConfigurationPropertyName n = ConfigurationPropertyName.of(name);
                if (source.getConfigurationProperty(n) != null
                        || source.containsDescendantOf(n) == ConfigurationPropertyState.PRESENT) {
                    return true;
                }
            }
        }
        return false;
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
            EmbeddedOrphans.stopOrphan(dir.resolve("postmaster.pid"), EmbeddedOrphans.Program.POSTGRES, dir, EmbeddedOrphans.claim(dir, log), log);
            if (clean) {
                // The library deletes a clean data directory when the JVM exits; a JVM killed
                // meanwhile leaves part of it, on which initdb then fails. Wiped here instead, but
                // only a directory this class made (its marker) that no PostgreSQL is using.
                wipeIfOurs(dir, log);
            }
            if (!Files.exists(dir)) {
                // a new directory is ours: marked before initdb fills it, so a start killed
                // half-way still leaves it wipeable
                Files.writeString(marker(dir), "made by Waterline's embedded mode; wiped at start when clean=true\n");
            }
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

    /** Beside a PostgreSQL data directory this class made (and so may wipe): initdb wants the directory itself empty. */
    private static Path marker(Path dir) {
        return dir.resolveSibling(dir.getFileName() + ".waterline-embedded");
    }

    /**
     * Deletes {@code dir} if its marker is beside it and no PostgreSQL runs on it (no
     * {@code postmaster.pid}, or one naming a process that is gone); leaves anything else alone
     * (initdb then refuses a directory that is not empty, and the start fails instead of losing
     * someone's data).
     */
    private static void wipeIfOurs(Path dir, Log log) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        if (!Files.exists(marker(dir)) || postgresRunsOn(dir)) {
            if (log != null) {
                log.warn("Not wiping " + dir + ": not made by Waterline's embedded mode, or a PostgreSQL is running on it");
            }
            return;
        }
        deleteRecursively(dir);
    }

    private static boolean postgresRunsOn(Path dir) throws IOException {
        Path pidFile = dir.resolve("postmaster.pid");
        if (!Files.exists(pidFile)) {
            return false;
        }
        String first = Files.readAllLines(pidFile).stream().findFirst().orElse("").strip();
        try {
            return ProcessHandle.of(Long.parseLong(first)).map(ProcessHandle::isAlive).orElse(false);
        }
        catch (NumberFormatException e) {
            return true;   // unreadable: assume it runs
        }
    }

    private static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (var paths = Files.walk(dir)) {
            for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    private static RedisServer startRedis(Path dir, boolean clean, Log log) {
        try {
            EmbeddedOrphans.stopOrphan(dir.resolve("redis.pid"), EmbeddedOrphans.Program.REDIS, dir, EmbeddedOrphans.claim(dir, log), log);
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
                    // named so that a start after a killed server can find and stop this one (EmbeddedOrphans)
                    .setting("pidfile " + dir.resolve("redis.pid"))
                    .setting("appendonly yes")
                    .setting("save \"\"")
                    .setting("daemonize no")
                    // the tests give each application context a database of its own (16 are not enough)
                    .setting("databases 64")
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
