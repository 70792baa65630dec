package dev.waterline.load.deployment;

import java.io.IOException;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import redis.embedded.RedisServer;

/**
 * A deployment a chaos run owns outright, so that it may break any part of it: a private
 * PostgreSQL (the embedded binaries, its own port and folder: never the machine's service), a
 * private Redis (likewise, with an append-only file as the zero-configuration mode keeps), one or
 * more server nodes on them, and, where a scenario asks, a {@link FaultProxy} between the nodes
 * and PostgreSQL, between the nodes and Redis, and between the clients and each node. A Redis
 * replica can be kept beside the primary for the stale-replica case, and PostgreSQL's WAL can be
 * put on a small tmpfs of its own (root only: {@code mount}) for the disk-full case.
 * <p>
 * Everything is stopped by {@link #close()}; the embedded PostgreSQL also stops with this JVM.
 */
public final class Deployment implements AutoCloseable {

    /**
     * What to start.
     *
     * @param nodes        server nodes, all on the same PostgreSQL and Redis
     * @param pgProxy      a fault proxy between the nodes and PostgreSQL
     * @param redisProxy   a fault proxy between the nodes and Redis
     * @param clientProxy  a fault proxy in front of each node, which the clients are given instead
     * @param redisReplica a Redis replica of the primary, for {@link #promoteReplica()}
     * @param walTmpfsBytes PostgreSQL's WAL on a tmpfs of this size; 0: on the data folder
     */
    public record Options(int nodes, boolean pgProxy, boolean redisProxy, boolean clientProxy, boolean redisReplica, long walTmpfsBytes) {
    }

    private final Options options;
    private final Path dir;
    private final ServerProcess.Launch launch;
    private final String jwtSecret = HexFormat.of().formatHex(new SecureRandom().generateSeed(32));
    private final Path pgDir;
    private int pgPort;
    private EmbeddedPostgres pg;
    private Path walMount;
    private final Path redisDir;
    private int redisPort;
    private RedisServer redis;
    private RedisServer replica;
    private int replicaPort;
    private FaultProxy pgProxy;
    private FaultProxy redisProxy;
    private final List<FaultProxy> clientProxies = new ArrayList<>();
    private final List<ServerProcess> nodes = new ArrayList<>();
    private boolean stopped;

    public Deployment(Options options, Path dir, ServerProcess.Launch launch) {
        this.options = options;
        this.dir = dir.toAbsolutePath();
        this.launch = launch;
        this.pgDir = this.dir.resolve("postgres");
        this.redisDir = this.dir.resolve("redis");
    }

    /** Stops everything if the harness's JVM ends first (Ctrl-C): no node, database or mount is left behind. */
    private final Thread onExit = new Thread(() -> {
        try {
            stopAll();
        }
        catch (Exception e) {
            System.err.println("waterline-load: stopping the deployment at exit: " + e);
        }
    }, "deployment-exit");

    /** Starts PostgreSQL, Redis, the proxies and every node; the clients' base URLs are then {@link #clientBases()}. */
    public Deployment start() throws Exception {
        Files.createDirectories(dir);
        Runtime.getRuntime().addShutdownHook(onExit);
        try {
            startAll();
        }
        catch (Exception e) {
            // what did start is stopped at once, not left running beside the next scenario
            stopAll();
            throw e;
        }
        return this;
    }

    private synchronized void startAll() throws Exception {
        pgPort = freePort();
        startPostgres();
        try (Connection c = DriverManager.getConnection(pg.getJdbcUrl("postgres", "postgres"), "postgres", "");
             Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE waterline");
        }
        if (options.walTmpfsBytes() > 0) {
            walOnTmpfs(options.walTmpfsBytes());
        }
        redisPort = freePort();
        redis = redis(redisPort, redisDir, null);
        redis.start();
        if (options.redisReplica()) {
            replicaPort = freePort();
            replica = redis(replicaPort, dir.resolve("redis-replica"), "replicaof 127.0.0.1 " + redisPort);
            replica.start();
        }
        if (options.pgProxy()) {
            pgProxy = new FaultProxy(0, "127.0.0.1", pgPort, FaultProxy.Faults.none());
        }
        if (options.redisProxy()) {
            redisProxy = new FaultProxy(0, "127.0.0.1", redisPort, FaultProxy.Faults.none());
        }
        int pgSeen = pgProxy != null ? pgProxy.port() : pgPort;
        int redisSeen = redisProxy != null ? redisProxy.port() : redisPort;
        List<String> args = List.of(
                "--spring.datasource.url=jdbc:postgresql://127.0.0.1:" + pgSeen + "/waterline",
                "--spring.datasource.username=postgres",
                "--spring.datasource.password=",
                "--spring.data.redis.host=127.0.0.1",
                "--spring.data.redis.port=" + redisSeen,
                "--waterline.auth.jwt-secret=" + jwtSecret,
                "--waterline.auth.dev-tokens=true");
        for (int n = 1; n <= options.nodes(); n++) {
            ServerProcess node = ServerProcess.startWith(launch, dir.resolve("node-" + n), args);
            nodes.add(node);
            if (options.clientProxy()) {
                int port = Integer.parseInt(node.baseUrl().substring(node.baseUrl().lastIndexOf(':') + 1));
                clientProxies.add(new FaultProxy(0, "127.0.0.1", port, FaultProxy.Faults.none()));
            }
        }
    }

    /** Refuses a change to a deployment already stopped (a step that ran past the end of its run). */
    private void live() {
        if (stopped) {
            throw new IllegalStateException("the deployment is stopped");
        }
    }

    /** The base URLs clients are given: each node's, or its proxy's. */
    public List<String> clientBases() {
        if (!clientProxies.isEmpty()) {
            return clientProxies.stream().map(p -> "http://127.0.0.1:" + p.port()).toList();
        }
        return nodes.stream().map(ServerProcess::baseUrl).toList();
    }

    /** The secret the nodes verify tokens with: the harness mints its own. */
    public String jwtSecret() {
        return jwtSecret;
    }

    /** The nodes' own base URLs (not through a proxy): for the harness's own checks. */
    public List<String> nodeBases() {
        return nodes.stream().map(ServerProcess::baseUrl).toList();
    }

    public FaultProxy pgProxy() {
        return require(pgProxy, "PostgreSQL proxy");
    }

    public FaultProxy redisProxy() {
        return require(redisProxy, "Redis proxy");
    }

    public List<FaultProxy> clientProxies() {
        return clientProxies;
    }

    private static <T> T require(T t, String what) {
        if (t == null) {
            throw new IllegalStateException("this deployment has no " + what);
        }
        return t;
    }

    // ---- the nodes

    /** SIGKILL of node {@code i} (0-based): no graceful stop, its sockets dropped by the kernel. */
    public synchronized void kill(int i) throws InterruptedException {
        live();
        nodes.get(i).kill();
    }

    /** Node {@code i} again, on its port, as a supervisor restarts a crashed process. */
    public synchronized void restart(int i) throws Exception {
        live();
        nodes.set(i, nodes.get(i).restart());
    }

    /** Node {@code i}'s process id. */
    public synchronized long nodePid(int i) {
        return nodes.get(i).pid();
    }

    int nodeCount() {
        return nodes.size();
    }

    // ---- PostgreSQL

    private void startPostgres() throws IOException {
        java.io.File log = dir.resolve("postgres.log").toFile();
        // assigned only once started: a failed start leaves the earlier instance to be stopped by its data folder
        pg = EmbeddedPostgres.builder()
                .setOutputRedirector(ProcessBuilder.Redirect.appendTo(log))
                .setErrorRedirector(ProcessBuilder.Redirect.appendTo(log))
                .setDataDirectory(pgDir)
                .setCleanDataDirectory(false)
                .setPort(pgPort)
                .setPGStartupWait(Duration.ofSeconds(60))
                .setServerConfig("max_connections", "200")
                // durable commits, as production: the library's test defaults turn fsync off
                .setServerConfig("fsync", "on")
                .setServerConfig("synchronous_commit", "on")
                // keeps the WAL within a small tmpfs when there is one
                .setServerConfig("max_wal_size", "96MB")
                .setServerConfig("min_wal_size", "32MB")
                .start();
    }

    /** A fast shutdown of PostgreSQL (sessions ended, no new ones), as an operator's stop. */
    public synchronized void stopPostgres() throws IOException {
        live();
        pg.close();
    }

    /**
     * PostgreSQL again on its port and data, as a supervisor would: after {@link #stopPostgres()},
     * or after it ended by itself (a PANIC it could not recover from). A postmaster still running
     * (in crash recovery, say) is given 60 s to accept connections before it is stopped and
     * started. Returns what was done, for the run's log.
     */
    public synchronized String startPostgresAgain() throws IOException, InterruptedException {
        live();
        if (postgresUp()) {
            return "PostgreSQL was up";
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (postmasterAlive() && System.nanoTime() < deadline) {
            if (postgresUp()) {
                return "PostgreSQL recovered by itself";
            }
            TimeUnit.MILLISECONDS.sleep(250);
        }
        // the library's own stop (pg_ctl, which fails harmlessly on a server that is gone) also
        // releases its lock on the data folder, which a new start takes again
        boolean wasRunning = postmasterAlive();
        pg.close();
        stopPostmasterOfFolder();
        startPostgres();
        return wasRunning ? "PostgreSQL did not recover within 60 s and was stopped and started" : "PostgreSQL had stopped and was started";
    }

    /** The postmaster the data folder's pid file names, if it is one on this folder and still running. */
    private java.util.Optional<ProcessHandle> postmaster() {
        try {
            Path pid = pgDir.resolve("postmaster.pid");
            if (!Files.exists(pid)) {
                return java.util.Optional.empty();
            }
            long p = Long.parseLong(Files.readAllLines(pid).getFirst().strip());
            // a pid reused by another program since is not ours
            String cmdline = Files.readString(Path.of("/proc/" + p + "/cmdline")).replace('\0', ' ');
            return cmdline.contains("postgres") && cmdline.contains(pgDir.toString())
                    ? ProcessHandle.of(p).filter(ProcessHandle::isAlive) : java.util.Optional.empty();
        }
        catch (IOException | RuntimeException e) {
            return java.util.Optional.empty();
        }
    }

    private boolean postmasterAlive() {
        return postmaster().isPresent();
    }

    /** Makes sure no postmaster runs on the data folder: the library's stop may have failed (it only logs). */
    private void stopPostmasterOfFolder() throws InterruptedException {
        java.util.Optional<ProcessHandle> p = postmaster();
        if (p.isEmpty()) {
            return;
        }
        p.get().destroy();   // SIGTERM: PostgreSQL's smart shutdown
        try {
            p.get().onExit().get(10, TimeUnit.SECONDS);
        }
        catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            p.get().destroyForcibly();
            p.get().onExit().join();
        }
    }

    boolean postgresUp() {
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + pgPort + "/postgres?connectTimeout=3",
                "postgres", "")) {
            return c.isValid(3);
        }
        catch (SQLException e) {
            return false;
        }
    }

    /**
     * Moves {@code pg_wal} onto a tmpfs of its own, as an operator puts the WAL on its own volume:
     * PostgreSQL stopped, the files moved, a symlink left in their place, PostgreSQL started.
     */
    private void walOnTmpfs(long bytes) throws Exception {
        walMount = dir.resolve("wal-tmpfs");
        Files.createDirectories(walMount);
        pg.close();
        exec("mount", "-t", "tmpfs", "-o", "size=" + bytes, "tmpfs", walMount.toString());
        Path wal = pgDir.resolve("pg_wal");
        exec("cp", "-a", wal + "/.", walMount.toString());
        exec("rm", "-rf", wal.toString());
        Files.createSymbolicLink(wal, walMount);
        startPostgres();
    }

    /** Fills the WAL's tmpfs to the last byte with a ballast file; returns the bytes written. */
    public synchronized long fillWal() throws IOException {
        live();
        if (walMount == null) {
            throw new IllegalStateException("this deployment has no WAL tmpfs");
        }
        long written = 0;
        byte[] mb = new byte[1 << 20];
        try (OutputStream out = Files.newOutputStream(walMount.resolve("ballast"))) {
            while (true) {
                out.write(mb);
                written += mb.length;
            }
        }
        catch (IOException e) {
            if (!String.valueOf(e.getMessage()).contains("No space left")) {
                throw e;
            }
        }
        // the last partial megabyte: the disk is full to the byte
        try (OutputStream out = Files.newOutputStream(walMount.resolve("ballast-tail"))) {
            for (int i = 0; i < 1 << 20; i++) {
                out.write(0);
                written++;
            }
        }
        catch (IOException e) {
            if (!String.valueOf(e.getMessage()).contains("No space left")) {
                throw e;
            }
        }
        return written;
    }

    /** Frees the WAL's space again. */
    public synchronized void freeWal() throws IOException {
        live();
        Files.deleteIfExists(walMount.resolve("ballast"));
        Files.deleteIfExists(walMount.resolve("ballast-tail"));
    }

    /** Whether this machine can mount a tmpfs for the WAL (root, and mount(8) works); else why not. */
    public static String walTmpfsUnavailable() {
        if (!"root".equals(System.getProperty("user.name"))) {
            return "mounting a tmpfs for the WAL needs root (running as " + System.getProperty("user.name") + ")";
        }
        try {
            Path probe = Files.createTempDirectory("waterline-tmpfs-probe");
            try {
                exec("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", probe.toString());
                exec("umount", probe.toString());
                return null;
            }
            finally {
                Files.deleteIfExists(probe);
            }
        }
        catch (Exception e) {
            return "mount -t tmpfs failed here: " + e.getMessage();
        }
    }

    // ---- Redis

    private static RedisServer redis(int port, Path dataDir, String extra) throws IOException {
        Files.createDirectories(dataDir);
        var b = RedisServer.newRedisServer()
                .port(port)
                .bind("127.0.0.1")
                .setting("dir " + dataDir)
                .setting("appendonly yes")
                .setting("save \"\"")
                .setting("daemonize no")
                .setting("databases 64");
        if (extra != null) {
            b.setting(extra);
        }
        return b.onShutdownForceStop(true).build();
    }

    /** FLUSHALL on the primary: every key gone at once, the server's index with them. */
    public synchronized void flushRedis() {
        live();
        redisCommand(redisPort, c -> c.sync().flushall());
    }

    /** The primary stopped (SHUTDOWN: its append-only file flushed) and started again on its port and that file. */
    public synchronized void restartRedis(Duration down) throws Exception {
        live();
        try {
            redisCommand(redisPort, c -> c.sync().shutdown(false));
        }
        catch (io.lettuce.core.RedisException e) {
            // SHUTDOWN closes the connection instead of answering
        }
        redis.stop();
        TimeUnit.MILLISECONDS.sleep(down.toMillis());
        redis = redis(redisPort, redisDir, null);
        redis.start();
    }

    /** The replica stops following the primary: from now on it holds what the primary held at this moment. */
    public synchronized void detachReplica() {
        live();
        redisCommand(replicaPort, c -> c.sync().replicaofNoOne());
    }

    /**
     * The stale replica promoted: the nodes' Redis proxy now leads to it, and every connection
     * through the proxy is cut so that the nodes reconnect to it. The primary keeps running,
     * unreached, as a primary that was partitioned away.
     */
    public synchronized void promoteReplica() {
        live();
        FaultProxy p = redisProxy();
        p.retarget("127.0.0.1", replicaPort);
        p.cut();
    }

    private static void redisCommand(int port, java.util.function.Consumer<StatefulRedisConnection<String, String>> command) {
        RedisClient client = RedisClient.create("redis://127.0.0.1:" + port);
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            command.accept(c);
        }
        finally {
            client.shutdown();
        }
    }

    // ---- helpers

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static void exec(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            throw new IOException(String.join(" ", cmd) + " failed: " + out.strip());
        }
    }

    @Override
    public void close() throws Exception {
        try {
            Runtime.getRuntime().removeShutdownHook(onExit);
        }
        catch (IllegalStateException e) {
            // the JVM is already shutting down: the hook runs this itself
        }
        stopAll();
    }

    private synchronized void stopAll() throws Exception {
        if (stopped) {
            return;
        }
        stopped = true;
        Exception first = null;
        for (ServerProcess n : nodes) {
            try {
                n.close();
            }
            catch (Exception e) {
                first = first == null ? e : first;
            }
        }
        for (FaultProxy p : clientProxies) {
            p.close();
        }
        if (pgProxy != null) {
            pgProxy.close();
        }
        if (redisProxy != null) {
            redisProxy.close();
        }
        for (RedisServer r : new RedisServer[] {redis, replica}) {
            if (r != null) {
                try {
                    r.stop();
                }
                catch (IOException e) {
                    first = first == null ? e : first;
                }
            }
        }
        if (pg != null) {
            try {
                pg.close();
                stopPostmasterOfFolder();
            }
            catch (IOException e) {
                first = first == null ? e : first;
            }
        }
        if (walMount != null) {
            try {
                exec("umount", walMount.toString());
            }
            catch (IOException e) {
                first = first == null ? e : first;
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
