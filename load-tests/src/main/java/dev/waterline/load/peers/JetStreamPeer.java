package dev.waterline.load.peers;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;

import io.nats.client.Connection;
import io.nats.client.ConsumeOptions;
import io.nats.client.Consumer;
import io.nats.client.ConsumerContext;
import io.nats.client.Dispatcher;
import io.nats.client.ErrorListener;
import io.nats.client.JetStream;
import io.nats.client.JetStreamOptions;
import io.nats.client.JetStreamSubscription;
import io.nats.client.MessageConsumer;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.PublishOptions;
import io.nats.client.StreamContext;
import io.nats.client.api.AckPolicy;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.DeliverPolicy;
import io.nats.client.api.PublishAck;
import io.nats.client.api.RetentionPolicy;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import io.nats.client.support.Status;

/**
 * The peer run's NATS JetStream: a private {@code nats-server} (the Debian 2.9 binary) as a child
 * process on its own loopback port with its store under the run's folder; one file-stored,
 * work-queue stream {@code WLPEER} on {@code wlpeer.>}; one durable pull consumer {@code c<i>}
 * per client on {@code wlpeer.<i>}, consumed with the simplified API ({@code consume}) and an
 * explicit ack after {@link Events#consumed}. Clients are spread over a few connections by index
 * (client {@code i} publishes and consumes on connection {@code i % connections}), each with one
 * dispatcher for all its consumers so that 600 clients are not 600 threads.
 *
 * <p>Publishes are {@code publishAsync} with {@code Nats-Msg-Id} set to the message id (the
 * stream's duplicate window dedupes a resend); each sender has its own window of unconfirmed
 * publishes, and a full window is answered with {@code false} at once. Errors: a publish whose
 * future fails (an error from the stream, no responders, no ack within 30 s, the connection
 * closing) is reported {@link Events#failed}; asynchronous client errors are printed
 * to {@code System.err}. {@link #close} stops the consumers, closes the connections, then ends
 * the child (SIGTERM, then SIGKILL after 10 s); no other process is touched.
 */
final class JetStreamPeer implements PeerSystem {

    private static final String STREAM = "WLPEER";
    private static final String SUBJECT_PREFIX = "wlpeer.";
    private static final String SERVER_BINARY = "/usr/sbin/nats-server";
    private static final String HOST = "127.0.0.1";
    private static final Duration DUPLICATE_WINDOW = Duration.ofMinutes(2);
    private static final Duration START_DEADLINE = Duration.ofSeconds(30);
    private static final Duration STOP_GRACE = Duration.ofSeconds(10);
    /**
     * jnats' default (5 s) fails publishes that a loaded 2-core machine would still confirm. jnats
     * uses the request clean-up interval both as the timeout and as the sweep's period, so an
     * unanswered publish fails 30-60 s after it was made.
     */
    private static final Duration ACK_TIMEOUT = Duration.ofSeconds(30);
    /** Consumer creation is a request per client; the default (the 2 s connect timeout) is short under load. */
    private static final Duration API_TIMEOUT = Duration.ofSeconds(15);
    /**
     * Far above what the windows let queue (window × clients publishes plus max ack pending ×
     * clients acks), so that jnats' writer queue never fills: when it does, publishAsync blocks
     * for up to the connect timeout and then throws, and publish must not wait. It is a linked
     * queue's bound, not an allocation.
     */
    private static final int OUTGOING_QUEUE = 1 << 22;

    private final int maxAckPending;
    private final int connections;
    private final int confirmWindow;

    // Set by start and setUp, read from the client library's threads: volatile for visibility.
    private volatile Process server;
    private volatile String version = "";
    private volatile List<Connection> conns = List.of();
    private volatile List<JetStream> jetStreams = List.of();
    private volatile List<MessageConsumer> consumers = List.of();
    private volatile AtomicIntegerArray unconfirmed;
    private volatile Events events;

    JetStreamPeer(int maxAckPending, int connections, int confirmWindow) {
        if (maxAckPending < 1 || connections < 1 || confirmWindow < 1) {
            throw new IllegalArgumentException("max ack pending, connections and window must be positive: "
                    + maxAckPending + ", " + connections + ", " + confirmWindow);
        }
        this.maxAckPending = maxAckPending;
        this.connections = connections;
        this.confirmWindow = confirmWindow;
    }

    @Override
    public String label() {
        String v = version;
        // the row names the minor release, as the other brokers' rows do
        String[] parts = v.split("\\.");
        return parts.length >= 2 ? "NATS JetStream " + parts[0] + "." + parts[1] : "NATS JetStream";
    }

    @Override
    public String durability() {
        return "publish ack not fsynced (2.9 file store syncs every 2 min)";
    }

    @Override
    public void start(Path dir) throws Exception {
        if (server != null) {
            throw new IllegalStateException("already started");
        }
        Path base = dir.toAbsolutePath();
        Path store = base.resolve("store");
        Files.createDirectories(store);
        Path log = base.resolve("nats.log");
        int port = freePort();
        List<String> cmd = List.of(SERVER_BINARY, "-a", HOST, "-p", Integer.toString(port),
                "-js", "-sd", store.toString(), "-l", log.toString());
        // stdout and stderr too, for what the server says before it opens its log (a bad flag, a taken port)
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        server = p;
        List<Connection> opened = new ArrayList<>();
        try {
            opened.add(awaitJetStream(p, port, log));
            for (int c = 1; c < connections; c++) {
                opened.add(Nats.connect(options("nats://" + HOST + ":" + port, c)));
            }
            List<JetStream> js = new ArrayList<>();
            for (Connection c : opened) {
                js.add(c.jetStream(JetStreamOptions.builder().requestTimeout(API_TIMEOUT).build()));
            }
            version = opened.getFirst().getServerInfo().getVersion();
            conns = List.copyOf(opened);
            jetStreams = List.copyOf(js);
        }
        catch (Exception | Error e) {
            // a broker that did not come up is not left running behind the run's back
            for (Connection c : opened) {
                closeQuietly(c);
            }
            stop(p);
            server = null;
            throw e;
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName(HOST))) {
            return s.getLocalPort();
        }
    }

    /** The first connection, once the server accepts it and its JetStream answers. */
    private Connection awaitJetStream(Process p, int port, Path log) throws Exception {
        String url = "nats://" + HOST + ":" + port;
        long deadline = System.nanoTime() + START_DEADLINE.toNanos();
        Exception last = null;
        while (System.nanoTime() < deadline) {
            if (!p.isAlive()) {
                throw new IllegalStateException("nats-server exited with " + p.exitValue() + "; see " + log);
            }
            Connection c = null;
            try {
                // a bare socket first: jnats reports every refused connect to the error listener
                new Socket(HOST, port).close();
                c = Nats.connect(options(url, 0));
                c.jetStreamManagement().getAccountStatistics();
                return c;
            }
            catch (IOException | io.nats.client.JetStreamApiException e) {
                last = e;
                if (c != null) {
                    closeQuietly(c);
                }
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("nats-server on " + url + " gave no JetStream within " + START_DEADLINE
                + " (last: " + last + "); see " + log);
    }

    private Options options(String url, int index) {
        return Options.builder()
                .server(url)
                .connectionName("wlpeer-" + index)
                .maxMessagesInOutgoingQueue(OUTGOING_QUEUE)
                .requestCleanupInterval(ACK_TIMEOUT)
                .errorListener(new Complaints())
                .build();
    }

    @Override
    public List<Long> pids() {
        Process p = server;
        return p == null ? List.of() : List.of(p.pid());
    }

    @Override
    public void setUp(int clients, Events events) throws Exception {
        if (conns.isEmpty()) {
            throw new IllegalStateException("not started");
        }
        if (this.events != null) {
            throw new IllegalStateException("already set up");
        }
        this.unconfirmed = new AtomicIntegerArray(clients);
        this.events = events;
        // Work-queue retention: an acked message leaves the stream, as it leaves a RabbitMQ queue,
        // so the store holds what is in flight rather than growing for the whole run. It allows
        // only consumers with disjoint filters, which one consumer per client's subject is.
        StreamConfiguration stream = StreamConfiguration.builder()
                .name(STREAM)
                .subjects(SUBJECT_PREFIX + ">")
                .storageType(StorageType.File)
                .retentionPolicy(RetentionPolicy.WorkQueue)
                .replicas(1)
                .duplicateWindow(DUPLICATE_WINDOW)
                .build();
        conns.getFirst().jetStreamManagement().addStream(stream);

        List<MessageConsumer> started = new ArrayList<>(clients);
        List<Future<List<MessageConsumer>>> perConnection = new ArrayList<>();
        // one creator per connection: consumer creation is a round trip each, and 600 in a row take long
        try (ExecutorService creators = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int c = 0; c < conns.size(); c++) {
                int conn = c;
                perConnection.add(creators.submit(() -> startConsumers(conn, clients, events)));
            }
            for (Future<List<MessageConsumer>> f : perConnection) {
                try {
                    started.addAll(f.get());
                }
                catch (ExecutionException e) {
                    // the consumers made so far end with their connections in close
                    throw e.getCause() instanceof Exception cause ? cause : e;
                }
            }
        }
        consumers = List.copyOf(started);
        // the pull requests are on the wire, not just in the writer's queue
        for (Connection c : conns) {
            c.flush(API_TIMEOUT);
        }
    }

    private List<MessageConsumer> startConsumers(int conn, int clients, Events ev) throws Exception {
        Connection connection = conns.get(conn);
        StreamContext stream = connection.getStreamContext(STREAM,
                JetStreamOptions.builder().requestTimeout(API_TIMEOUT).build());
        Dispatcher dispatcher = connection.createDispatcher();
        // the pull batch is the consumer's max ack pending: the analogue of a prefetch
        ConsumeOptions consume = ConsumeOptions.builder().batchSize(maxAckPending).build();
        List<MessageConsumer> mine = new ArrayList<>();
        for (int i = conn; i < clients; i += connections) {
            int client = i;
            ConsumerContext consumer = stream.createOrUpdateConsumer(ConsumerConfiguration.builder()
                    .durable("c" + client)
                    .filterSubject(SUBJECT_PREFIX + client)
                    .ackPolicy(AckPolicy.Explicit)
                    .deliverPolicy(DeliverPolicy.All)
                    .maxAckPending(maxAckPending)
                    .build());
            mine.add(consumer.consume(consume, dispatcher, msg -> {
                ev.consumed(client, msg.getData());
                msg.ack();
            }));
        }
        return mine;
    }

    @Override
    public boolean publish(int sender, int recipient, long id, byte[] body) throws Exception {
        AtomicIntegerArray window = unconfirmed;
        Events ev = events;
        List<JetStream> js = jetStreams;
        if (window == null || ev == null || js.isEmpty()) {
            throw new IllegalStateException("not set up, or closed");
        }
        // only this thread raises the count, so a check then an increment cannot overshoot
        if (window.get(sender) >= confirmWindow) {
            return false;
        }
        window.incrementAndGet(sender);
        CompletableFuture<PublishAck> ack;
        try {
            // Nats-Msg-Id, as a producer that retries must send it: the stream then tracks every id of
            // its duplicate window, a cost per message that RabbitMQ's rows do not pay (stated with the row)
            ack = js.get(sender % connections).publishAsync(SUBJECT_PREFIX + recipient, body,
                    PublishOptions.builder().messageId(Long.toString(id)).build());
        }
        catch (RuntimeException e) {
            // the connection is closed, draining or out of reconnect buffer (IllegalStateException),
            // or the client refused the publish otherwise: nothing went out, and the slot is free again
            window.decrementAndGet(sender);
            ev.failed(id, "not sent: " + e);
            return true;
        }
        ack.whenComplete((a, error) -> {
            try {
                if (error != null) {
                    ev.failed(id, reason(error));
                }
                else {
                    // a duplicate ack is for an id stored before: it is confirmed all the same (the run
                    // counts a confirmation once per id), and leaving it unreported would hold the drain
                    ev.confirmed(id);
                }
            }
            finally {
                window.decrementAndGet(sender);
            }
        });
        return true;
    }

    private static String reason(Throwable error) {
        Throwable t = error;
        // jnats wraps the publish's IOException or JetStreamApiException in a RuntimeException
        while ((t instanceof CompletionException || t.getClass() == RuntimeException.class) && t.getCause() != null) {
            t = t.getCause();
        }
        return t.getClass().getSimpleName() + ": " + t.getMessage();
    }

    @Override
    public Map<String, String> settings() {
        Map<String, String> s = new LinkedHashMap<>();
        s.put("max ack pending", maxAckPending + " per consumer (pull batch " + maxAckPending + ")");
        s.put("confirm window", confirmWindow + " unconfirmed publishes per sender");
        s.put("connections", connections + " (client i publishes and consumes on connection i mod " + connections + ")");
        s.put("consumers", "durable pull, one per client, explicit ack, deliver all, simplified consume()");
        s.put("stream", STREAM + ", file storage, work-queue retention, 1 replica");
        s.put("duplicate window", DUPLICATE_WINDOW.toMinutes() + " min (Nats-Msg-Id = message id)");
        s.put("publish ack timeout", ACK_TIMEOUT.toSeconds() + "-" + 2 * ACK_TIMEOUT.toSeconds() + " s");
        return s;
    }

    @Override
    public void abort() {
        Process p = server;
        if (p != null) {
            p.destroyForcibly();
        }
    }

    @Override
    public void close() {
        for (MessageConsumer c : consumers) {
            try {
                c.stop();
            }
            catch (RuntimeException e) {
                System.err.println("JetStreamPeer: stopping consumer " + c.getConsumerName() + ": " + e);
            }
        }
        consumers = List.of();
        for (Connection c : conns) {
            closeQuietly(c);
        }
        conns = List.of();
        jetStreams = List.of();
        Process p = server;
        if (p != null) {
            stop(p);
            server = null;
        }
    }

    private static void closeQuietly(Connection c) {
        try {
            c.close();
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        catch (RuntimeException e) {
            System.err.println("JetStreamPeer: closing connection: " + e);
        }
    }

    /** Ends our own child only: SIGTERM (nats-server then flushes its store), SIGKILL if it lingers. */
    private static void stop(Process p) {
        try {
            p.destroy();
            if (!p.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
                System.err.println("JetStreamPeer: nats-server " + p.pid() + " ignored SIGTERM for " + STOP_GRACE + ", killing it");
                p.destroyForcibly().waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS);
            }
        }
        catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** jnats' asynchronous complaints, which its default listener would send to java.util.logging. */
    private static final class Complaints implements ErrorListener {

        @Override
        public void errorOccurred(Connection conn, String error) {
            System.err.println("JetStreamPeer: server error on " + name(conn) + ": " + error);
        }

        @Override
        public void exceptionOccurred(Connection conn, Exception exp) {
            System.err.println("JetStreamPeer: exception on " + name(conn) + ": " + exp);
        }

        @Override
        public void slowConsumerDetected(Connection conn, Consumer consumer) {
            System.err.println("JetStreamPeer: slow consumer on " + name(conn));
        }

        @Override
        public void heartbeatAlarm(Connection conn, JetStreamSubscription sub, long lastStreamSequence, long lastConsumerSequence) {
            System.err.println("JetStreamPeer: missed heartbeats on " + name(conn) + " for " + sub.getConsumerName());
        }

        @Override
        public void pullStatusError(Connection conn, JetStreamSubscription sub, Status status) {
            System.err.println("JetStreamPeer: pull error on " + name(conn) + " for " + sub.getConsumerName() + ": " + status);
        }

        @Override
        public void unhandledStatus(Connection conn, JetStreamSubscription sub, Status status) {
            System.err.println("JetStreamPeer: unhandled status on " + name(conn) + ": " + status);
        }

        @Override
        public void messageDiscarded(Connection conn, io.nats.client.Message msg) {
            System.err.println("JetStreamPeer: message discarded on " + name(conn) + " to " + msg.getSubject());
        }

        private static String name(Connection conn) {
            return conn == null ? "?" : conn.getOptions().getConnectionName();
        }
    }
}
