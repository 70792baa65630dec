package dev.waterline.load.peers;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.MessageProperties;
import com.rabbitmq.client.Return;
import com.rabbitmq.client.ShutdownSignalException;

/**
 * RabbitMQ as a peer system: a private single node (the Debian package's binaries, its own
 * node name, ports, config and files under the run's folder), one durable queue per client
 * ({@code wl-peer-<i>}, quorum or classic) on the default exchange, and over a few connections
 * one confirm-mode publishing channel per sender and one consuming channel per queue, each with
 * its own prefetch and manual acks, spread round-robin by client.
 *
 * <p>Errors: a nack, a return (mandatory, unroutable) or a publishing channel that closes with
 * messages unconfirmed is reported to {@link Events#failed} once per id; which callback reports an
 * id is decided by whoever removes it from its channel's outstanding map, so no id is both
 * confirmed and failed. A return names its message by the id in the body's first 8 bytes (the
 * run's body format). There is no connection recovery: a closed channel stays closed and every
 * later publish on it is reported failed at once (and counted as sent, not refused). Publishing
 * never waits for a confirm, but it writes to the socket, so it can block while the broker
 * applies flow control or a resource alarm (a blocked connection is logged to stderr).
 *
 * <p>Stopping: {@link #close} closes the connections, then {@code rabbitmqctl stop} on this node's
 * name only, and waits for the node's own beam (its pid file, or while booting the beam whose
 * {@code -home} is this node's folder) to exit: SIGTERM at once if rabbitmqctl could not reach it,
 * SIGKILL to that pid alone after 30 s. A start that fails half-way stops what it started before
 * throwing. The machine's own RabbitMQ service is never touched.
 */
final class RabbitPeer implements PeerSystem {

    private static final Path BIN = Path.of("/usr/lib/rabbitmq/bin");
    private static final long START_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(60);
    private static final long STOP_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(30);

    private final boolean quorum;
    private final int prefetch;
    private final int connectionCount;
    private final int confirmWindow;

    private final List<Connection> connections = new CopyOnWriteArrayList<>();
    // Written once each by start() and setUp(), read by whichever thread comes later.
    private volatile Node node;
    private volatile String version = "3.10";
    private volatile List<Publisher> publishers = List.of();
    private volatile int clients;
    // Tells the consumers' shutdown handlers that a closing channel is expected, not news.
    private volatile boolean closing;

    RabbitPeer(boolean quorum, int prefetch, int connections, int confirmWindow) {
        if (prefetch < 1 || connections < 1 || confirmWindow < 1) {
            throw new IllegalArgumentException("prefetch, connections and confirm window must be positive");
        }
        this.quorum = quorum;
        this.prefetch = prefetch;
        this.connectionCount = connections;
        this.confirmWindow = confirmWindow;
    }

    /** The private node: its name and AMQP port, and the environment every one of its scripts runs with. */
    private record Node(String name, int port, Path dir, Map<String, String> env, Path pidFile) {
    }

    @Override
    public String label() {
        return "RabbitMQ " + version + (quorum ? " quorum queues" : " classic durable queues");
    }

    @Override
    public String durability() {
        return quorum ? "fsync before confirm" : "persistent; may confirm a message consumed and acked before it reached disk";
    }

    @Override
    public void start(Path dir) throws Exception {
        if (node != null) {
            throw new IllegalStateException("already started");
        }
        for (String tool : List.of("rabbitmq-server", "rabbitmqctl")) {
            if (!Files.isExecutable(BIN.resolve(tool))) {
                throw new IllegalStateException("RabbitMQ is not installed here: no " + BIN.resolve(tool)
                        + " (the Debian package rabbitmq-server provides it)");
            }
        }
        Path home = dir.toAbsolutePath().normalize();
        Files.createDirectories(home.resolve("mnesia"));
        // a pid file left by an earlier run in this folder would name some other process
        Files.deleteIfExists(home.resolve("rabbitmq.pid"));
        Files.createDirectories(home.resolve("log"));
        int port = freePort();
        int distPort = freePort();
        while (distPort == port) {
            distPort = freePort();
        }
        String name = "wlpeer" + port + "@localhost";
        Path conf = home.resolve("rabbitmq.conf");
        // /etc/rabbitmq/rabbitmq.conf pins 5672, which the machine's own node holds; the watermark
        // and disk limit are stated so that a resource alarm, which blocks every publisher, does
        // not depend on the box's defaults.
        Files.writeString(conf, String.join("\n",
                "listeners.tcp.local = 127.0.0.1:" + port,
                "vm_memory_high_watermark.relative = 0.5",
                "disk_free_limit.absolute = 100MB",
                "log.console = false",
                "log.file.level = info",
                ""));
        Path envFile = home.resolve("rabbitmq-env.conf");
        // Our own env file, so /etc/rabbitmq/rabbitmq-env.conf (NODENAME=rabbit@localhost) is never read.
        Files.writeString(envFile, String.join("\n",
                "ERL_EPMD_ADDRESS=127.0.0.1",
                "SERVER_ADDITIONAL_ERL_ARGS=\"-kernel inet_dist_use_interface {127,0,0,1}\"",
                ""));
        Path plugins = home.resolve("enabled_plugins");
        Files.writeString(plugins, "[].\n");
        Map<String, String> env = new LinkedHashMap<>();
        // HOME holds the Erlang cookie: ours, not the machine's and not root's.
        env.put("HOME", home.toString());
        env.put("RABBITMQ_NODENAME", name);
        env.put("RABBITMQ_CONFIG_FILE", conf.toString());
        env.put("RABBITMQ_ADVANCED_CONFIG_FILE", home.resolve("advanced.config").toString());
        env.put("RABBITMQ_CONF_ENV_FILE", envFile.toString());
        env.put("RABBITMQ_DIST_PORT", Integer.toString(distPort));
        env.put("RABBITMQ_MNESIA_BASE", home.resolve("mnesia").toString());
        env.put("RABBITMQ_LOG_BASE", home.resolve("log").toString());
        env.put("RABBITMQ_PID_FILE", home.resolve("rabbitmq.pid").toString());
        env.put("RABBITMQ_ENABLED_PLUGINS_FILE", plugins.toString());
        Node started = new Node(name, port, home, Map.copyOf(env), home.resolve("rabbitmq.pid"));
        node = started;
        try {
            boot(started);
        }
        catch (Exception | Error e) {
            // a node that did not come up is not left running behind the harness's back
            try {
                close();
            }
            catch (Exception s) {
                e.addSuppressed(s);
            }
            throw e;
        }
    }

    private void boot(Node started) throws Exception {
        String name = started.name();
        int port = started.port();
        Path home = started.dir();

        // The /usr/sbin wrapper switches to the rabbitmq user and drops this environment.
        int launched = run(started, List.of(BIN.resolve("rabbitmq-server").toString(), "-detached"), "start.log", 30);
        if (launched != 0) {
            throw new IllegalStateException("rabbitmq-server -detached exited with " + launched + ": see " + home.resolve("start.log"));
        }
        ConnectionFactory factory = factory(port);
        long deadline = System.nanoTime() + START_TIMEOUT_NANOS;
        Connection first = null;
        while (first == null) {
            try {
                first = factory.newConnection("wl-peer-0");
            }
            catch (IOException | java.util.concurrent.TimeoutException e) {
                Optional<Long> pid = pidOf(started);
                if (pid.isPresent() && ProcessHandle.of(pid.get()).map(p -> !p.isAlive()).orElse(true)) {
                    throw new IllegalStateException("RabbitMQ node " + name + " exited while starting: see " + home.resolve("log"), e);
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("RabbitMQ node " + name + " accepted no connection on 127.0.0.1:" + port
                            + " within 60 s: see " + home.resolve("log"), e);
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(250));
                if (Thread.interrupted()) {
                    throw new InterruptedException("while waiting for RabbitMQ node " + name);
                }
            }
        }
        add(first);
        Object v = first.getServerProperties().get("version");
        if (v != null) {
            version = v.toString();
        }
        for (int k = 1; k < connectionCount; k++) {
            add(factory.newConnection("wl-peer-" + k));
        }
        // The pid file is written early in the boot, but only a running node is certain to have it.
        while (pidOf(started).isEmpty()) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("RabbitMQ node " + name + " runs but wrote no pid file " + started.pidFile());
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
        }
    }

    private void add(Connection c) {
        connections.add(c);
        // A blocked connection makes basicPublish wait on the socket: the run must be able to see why.
        c.addBlockedListener(
                reason -> System.err.println("RabbitMQ blocked connection " + c.getClientProvidedName() + ": " + reason),
                () -> System.err.println("RabbitMQ unblocked connection " + c.getClientProvidedName()));
    }

    private static ConnectionFactory factory(int port) {
        ConnectionFactory f = new ConnectionFactory();
        f.setHost("127.0.0.1");
        f.setPort(port);
        f.setUsername("guest");
        f.setPassword("guest");
        f.setVirtualHost("/");
        // A recovered channel restarts its publish sequence numbers: a failure is reported instead.
        f.setAutomaticRecoveryEnabled(false);
        f.setTopologyRecoveryEnabled(false);
        f.setConnectionTimeout(5_000);
        return f;
    }

    @Override
    public void setUp(int clients, Events events) throws Exception {
        if (connections.size() != connectionCount) {
            throw new IllegalStateException("not started");
        }
        if (!publishers.isEmpty()) {
            throw new IllegalStateException("already set up");
        }
        int perConnection = 2 * ((clients + connectionCount - 1) / connectionCount) + 1;
        int channelMax = connections.get(0).getChannelMax();
        if (channelMax > 0 && perConnection > channelMax) {
            throw new IllegalArgumentException(clients + " clients need " + perConnection + " channels per connection over "
                    + connectionCount + " connections; the broker allows " + channelMax + ": use more connections");
        }
        Channel admin = connections.get(0).createChannel();
        Map<String, Object> args = quorum ? Map.of("x-queue-type", "quorum") : null;
        for (int i = 0; i < clients; i++) {
            admin.queueDeclare(queue(i), true, false, false, args);
        }
        admin.close();
        for (int i = 0; i < clients; i++) {
            Channel ch = connections.get(i % connectionCount).createChannel();
            ch.basicQos(prefetch);
            ch.basicConsume(queue(i), false, new Sink(ch, i, events));
        }
        List<Publisher> made = new ArrayList<>(clients);
        for (int i = 0; i < clients; i++) {
            made.add(new Publisher(connections.get(i % connectionCount).createChannel(), events));
        }
        this.clients = clients;
        publishers = List.copyOf(made);
    }

    private static String queue(int client) {
        return "wl-peer-" + client;
    }

    @Override
    public boolean publish(int sender, int recipient, long id, byte[] body) throws Exception {
        return publishers.get(sender).publish(queue(recipient), id, body);
    }

    /**
     * One sender's confirm-mode channel: its unconfirmed messages by publish sequence number. The
     * run's thread adds, the connection's thread removes; an id is reported by whoever removes it.
     */
    private final class Publisher {

        private final Channel channel;
        private final Events events;
        private final ConcurrentSkipListMap<Long, Long> outstanding = new ConcurrentSkipListMap<>();
        // size() of a skip list walks it: the window is counted beside it.
        private final AtomicInteger unconfirmed = new AtomicInteger();

        Publisher(Channel channel, Events events) throws IOException {
            this.channel = channel;
            this.events = events;
            channel.confirmSelect();
            channel.addConfirmListener(
                    (tag, multiple) -> settle(tag, multiple, true),
                    (tag, multiple) -> settle(tag, multiple, false));
            channel.addReturnListener(this::returned);
            channel.addShutdownListener(this::closed);
        }

        boolean publish(String queue, long id, byte[] body) {
            if (unconfirmed.get() >= confirmWindow) {
                return false;
            }
            long seq = channel.getNextPublishSeqNo();
            // recorded before sending: the confirm can come back before basicPublish returns
            outstanding.put(seq, id);
            unconfirmed.incrementAndGet();
            try {
                channel.basicPublish("", queue, true, MessageProperties.PERSISTENT_BASIC, body);
            }
            catch (IOException | ShutdownSignalException e) {
                if (take(seq, id)) {
                    events.failed(id, "channel closed: " + e.getMessage());
                }
            }
            return true;
        }

        private void settle(long tag, boolean multiple, boolean ack) {
            ConcurrentNavigableMap<Long, Long> done = multiple ? outstanding.headMap(tag, true) : outstanding.subMap(tag, true, tag, true);
            for (Map.Entry<Long, Long> e : done.entrySet()) {
                if (take(e.getKey(), e.getValue())) {
                    if (ack) {
                        events.confirmed(e.getValue());
                    }
                    else {
                        events.failed(e.getValue(), "nack");
                    }
                }
            }
        }

        // RabbitMQ sends the return before the ack of the same message, on this same thread, so
        // taking the id here leaves the ack nothing to confirm.
        private void returned(Return r) {
            byte[] body = r.getBody();
            if (body == null || body.length < Long.BYTES) {
                System.err.println("RabbitMQ returned a message without an id to " + r.getRoutingKey() + ": " + r.getReplyText());
                return;
            }
            long id = ByteBuffer.wrap(body).getLong(0);
            for (Map.Entry<Long, Long> e : outstanding.entrySet()) {
                if (e.getValue() == id) {
                    if (take(e.getKey(), id)) {
                        events.failed(id, "returned: " + r.getReplyCode() + " " + r.getReplyText());
                    }
                    return;
                }
            }
            System.err.println("RabbitMQ returned message " + id + ", not outstanding on its channel: " + r.getReplyText());
        }

        private void closed(ShutdownSignalException cause) {
            for (Map.Entry<Long, Long> e : outstanding.entrySet()) {
                if (take(e.getKey(), e.getValue())) {
                    events.failed(e.getValue(), "channel closed: " + cause.getMessage());
                }
            }
        }

        private boolean take(long seq, long id) {
            if (outstanding.remove(seq, id)) {
                unconfirmed.decrementAndGet();
                return true;
            }
            return false;
        }
    }

    /** One queue's consumer on its own channel: reports each delivery, then acks it alone. */
    private final class Sink extends DefaultConsumer {

        private final int recipient;
        private final Events events;

        Sink(Channel channel, int recipient, Events events) {
            super(channel);
            this.recipient = recipient;
            this.events = events;
        }

        @Override
        public void handleDelivery(String tag, Envelope envelope, AMQP.BasicProperties properties, byte[] body) throws IOException {
            events.consumed(recipient, body);
            getChannel().basicAck(envelope.getDeliveryTag(), false);
        }

        @Override
        public void handleCancel(String tag) {
            System.err.println("RabbitMQ cancelled the consumer of " + queue(recipient));
        }

        @Override
        public void handleShutdownSignal(String tag, ShutdownSignalException sig) {
            if (!closing) {
                System.err.println("RabbitMQ consumer of " + queue(recipient) + " stopped: " + sig.getMessage());
            }
        }
    }

    @Override
    public List<Long> pids() {
        Node n = node;
        return n == null ? List.of() : pidOf(n).map(List::of).orElse(List.of());
    }

    @Override
    public Map<String, String> settings() {
        Map<String, String> s = new LinkedHashMap<>();
        int n = clients;
        String count = n > 0 ? Integer.toString(n) : "one per client";
        s.put("queues", quorum ? "quorum (x-queue-type=quorum), 1 node" : "classic, durable; messages persistent");
        s.put("prefetch", prefetch + " per consumer (basicQos, one consumer per channel)");
        s.put("acks", "manual, one basicAck per delivery");
        s.put("confirm window", confirmWindow + " unconfirmed per publishing channel (one channel per sender)");
        s.put("connections", connectionCount + ", every channel placed round-robin by client");
        s.put("publishing channels", count + ", confirm mode, mandatory publish on the default exchange");
        s.put("consuming channels", count + ", one queue each");
        return s;
    }

    @Override
    public void abort() {
        Node n = node;
        if (n != null) {
            pidOf(n).flatMap(ProcessHandle::of).ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    @Override
    public void close() throws Exception {
        closing = true;
        for (Connection c : connections) {
            try {
                c.close(10_000);
            }
            catch (Exception e) {
                System.err.println("RabbitMQ connection " + c.getClientProvidedName() + " did not close cleanly: " + e);
                c.abort(1_000);
            }
        }
        connections.clear();
        Node n = node;
        node = null;
        if (n != null) {
            stop(n);
        }
    }

    private static void stop(Node n) throws Exception {
        Optional<Long> before = pidOf(n);
        int rc;
        try {
            rc = run(n, List.of(BIN.resolve("rabbitmqctl").toString(), "-n", n.name(), "stop"), "stop.log", 60);
        }
        catch (IllegalStateException e) {
            System.err.println(e.getMessage());
            rc = -1;
        }
        // A node that never wrote its pid file may still be booting: look again after the stop, and
        // then for the one beam whose command line carries this node's own folder.
        Optional<ProcessHandle> beam = before.or(() -> pidOf(n)).flatMap(ProcessHandle::of).or(() -> byHome(n));
        if (beam.isEmpty()) {
            if (rc != 0) {
                System.err.println("RabbitMQ node " + n.name() + ": rabbitmqctl stop exited with " + rc
                        + " and no process of the node is left; see " + n.dir().resolve("stop.log"));
            }
            return;
        }
        ProcessHandle p = beam.get();
        if (rc != 0 && p.isAlive()) {
            // rabbitmqctl could not reach it, e.g. still booting: SIGTERM, which beam takes as init:stop()
            p.destroy();
        }
        long deadline = System.nanoTime() + STOP_TIMEOUT_NANOS;
        while (p.isAlive() && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
        }
        if (p.isAlive()) {
            System.err.println("RabbitMQ node " + n.name() + " (pid " + p.pid() + ") still runs 30 s after being told to stop: killing it");
            p.destroyForcibly();
            p.onExit().get(10, TimeUnit.SECONDS);
        }
    }

    // The node name is not on beam's command line, but "-home <HOME>" is, and HOME is this node's own folder.
    private static Optional<ProcessHandle> byHome(Node n) {
        return ProcessHandle.allProcesses()
                .filter(p -> p.info().command().map(c -> c.endsWith("/beam.smp")).orElse(false))
                .filter(p -> p.info().arguments().map(a -> {
                    int at = List.of(a).indexOf("-home");
                    return at >= 0 && at + 1 < a.length && a[at + 1].equals(n.dir().toString());
                }).orElse(false))
                .findFirst();
    }

    /** The node's beam pid, from its pid file; empty until the node has written it. */
    private static Optional<Long> pidOf(Node n) {
        try {
            String text = Files.readString(n.pidFile()).strip();
            if (!text.isEmpty()) {
                return Optional.of(Long.parseLong(text));
            }
        }
        catch (IOException | NumberFormatException e) {
            // not written yet
        }
        return Optional.empty();
    }

    /** Runs one of RabbitMQ's scripts in the node's environment, its output appended to {@code log}; its exit code. */
    private static int run(Node n, List<String> command, String log, int timeoutSeconds) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(n.dir().resolve(log).toFile()))
                .directory(n.dir().toFile());
        // Inherited RABBITMQ_* settings would point the scripts at some other node.
        pb.environment().keySet().removeIf(k -> k.startsWith("RABBITMQ_"));
        pb.environment().putAll(n.env());
        Process p = pb.start();
        if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            throw new IllegalStateException(String.join(" ", command) + " did not finish within " + timeoutSeconds + " s: see " + n.dir().resolve(log));
        }
        return p.exitValue();
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
