package dev.waterline.load.hooks;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import com.sun.net.httpserver.HttpServer;
import dev.waterline.load.chat.Reconciler;
import dev.waterline.load.run.Stats;
import org.HdrHistogram.ConcurrentHistogram;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The hooks side of a load run (PROTOCOL.md §7): one hook per chat, of one kind, and the receiver
 * the generator runs for it (an HTTP server in this process; for a broker, a consumer of the
 * broker named by {@code --hook-broker}). Every delivery received is counted by its idempotency
 * key and timed from the message's {@code sentAt} (the server's commit batch time, same machine
 * clock) to its arrival. An outage ({@code --hook-outage-at}, {@code --hook-outage-for}) takes the
 * HTTP receiver down (its port closed) and brings it back. At the end: every accepted message
 * must have reached its chat's hook at least once (lost = accepted with no delivery); repeats are
 * counted, not faults (at least once).
 */
public final class HookLoad implements AutoCloseable {

    static final JsonMapper JSON = JsonMapper.builder().build();

    /** One consumer of deliveries: the receiver of a kind. */
    interface Receiver extends AutoCloseable {
        /** The hook's body for POST /api/chats/{chatId}/hooks. */
        Map<String, Object> hook(String chatId);

        @Override
        void close();
    }

    final String kind;
    final String broker;
    final String runId;
    final Duration outageAt;
    final Duration outageFor;
    final PrintStream err;
    public final Map<String, String> hookOfChat = new ConcurrentHashMap<>();
    final Map<String, Integer> received = new ConcurrentHashMap<>();
    final ConcurrentHistogram latency = new ConcurrentHistogram(3_600_000_000L, 3);
    final ConcurrentHistogram steadyLatency = new ConcurrentHistogram(3_600_000_000L, 3);
    final LongAdder deliveries = new LongAdder();
    final AtomicLong backlogMax = new AtomicLong();
    final List<long[]> backlogSeries = new ArrayList<>();
    volatile long steadyFromNanos = Long.MAX_VALUE;
    volatile long steadyToNanos = Long.MAX_VALUE;
    volatile long outageEndedNanos;
    volatile long drainedNanos;
    final LongAdder steadyDeliveries = new LongAdder();
    private Receiver receiver;

    public HookLoad(String kind, String broker, String runId, Duration outageAt, Duration outageFor, PrintStream err) {
        this.kind = kind;
        this.broker = broker;
        this.runId = runId;
        this.outageAt = outageAt;
        this.outageFor = outageFor;
        this.err = err;
    }

    public void start() throws Exception {
        receiver = switch (kind) {
            case "http" -> new HttpReceiver();
            case "redis" -> new RedisReceiver();
            case "amqp" -> new AmqpReceiver();
            case "mqtt" -> new MqttReceiver();
            case "nats" -> new NatsReceiver();
            default -> throw new IllegalArgumentException("--hook-kind must be http, redis, amqp, mqtt or nats: " + kind);
        };
    }

    /** A delivery's payload arrived (at least once). */
    void arrived(String payload) {
        long now = System.nanoTime();
        JsonNode p = JSON.readTree(payload);
        String key = p.get("hookId").asString() + ":" + p.get("messageId").asString();
        received.merge(key, 1, Integer::sum);
        deliveries.increment();
        long micros = Math.max(0, Duration.between(Instant.parse(p.get("sentAt").asString()), Instant.now()).toNanos() / 1000);
        latency.recordValue(Math.min(micros, latency.getHighestTrackableValue()));
        if (now >= steadyFromNanos && now < steadyToNanos) {
            steadyLatency.recordValue(Math.min(micros, latency.getHighestTrackableValue()));
            steadyDeliveries.increment();
        }
    }

    public Map<String, Object> hookBody(String chatId) {
        return receiver.hook(chatId);
    }

    /** The chat load is being offered from now for {@code duration}: the steady window is its second half, the outage is scheduled. */
    public void offering(long startNanos, Duration duration, java.util.function.BiConsumer<Duration, Runnable> later) {
        steadyFromNanos = startNanos + duration.toNanos() / 2;
        steadyToNanos = startNanos + duration.toNanos();
        if (outageAt != null && outageFor != null) {
            if (!(receiver instanceof HttpReceiver h)) {
                throw new IllegalArgumentException("--hook-outage-at takes the http receiver down; use --hook-kind http");
            }
            steadyFromNanos = Long.MAX_VALUE;
            later.accept(outageAt, () -> {
                err.println("waterline-load: hook receiver DOWN for " + outageFor);
                h.down();
            });
            later.accept(outageAt.plus(outageFor), () -> {
                h.up();
                outageEndedNanos = System.nanoTime();
                err.println("waterline-load: hook receiver UP again");
            });
        }
    }

    /** Samples the server's hook backlog once (the progress loop calls it every second). */
    public void sample(HttpClient http, String base) {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base + "/actuator/prometheus")).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.ofString());
            for (String line : r.body().split("\n")) {
                if (line.startsWith("waterline_hook_backlog ")) {
                    long v = (long) Double.parseDouble(line.substring(line.indexOf(' ') + 1));
                    Stats.max(backlogMax, v);
                    synchronized (backlogSeries) {
                        backlogSeries.add(new long[] {System.currentTimeMillis(), v});
                    }
                }
            }
        }
        catch (IOException e) {
            // a missed sample
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Waits until every accepted message reached its chat's hook, at most {@code budget}; returns the ones that did not. */
    public long awaitDelivered(Iterable<Reconciler.Accepted> accepted, Duration budget) throws InterruptedException {
        long deadline = System.nanoTime() + budget.toNanos();
        while (true) {
            long missing = missing(accepted);
            if (missing == 0) {
                drainedNanos = System.nanoTime();
                return 0;
            }
            if (System.nanoTime() > deadline) {
                return missing;
            }
            TimeUnit.MILLISECONDS.sleep(200);
        }
    }

    long missing(Iterable<Reconciler.Accepted> accepted) {
        long missing = 0;
        for (Reconciler.Accepted a : accepted) {
            String hook = hookOfChat.get(a.chatId());
            if (hook != null && !received.containsKey(hook + ":" + a.messageId())) {
                missing++;
            }
        }
        return missing;
    }

    /** The accepted messages of the chats that have a hook: those owed a delivery. */
    public long owed(Iterable<Reconciler.Accepted> accepted) {
        long n = 0;
        for (Reconciler.Accepted a : accepted) {
            if (hookOfChat.containsKey(a.chatId())) {
                n++;
            }
        }
        return n;
    }

    long duplicates() {
        return received.values().stream().mapToLong(n -> n - 1).sum();
    }

    public String markdown(long accepted, long lost, Duration steadyWindow) {
        StringBuilder b = new StringBuilder("\n## Hooks (" + kind + ")\n\n| | |\n| --- | --- |\n");
        b.append("| hooks (one per hooked chat) | ").append(hookOfChat.size()).append(" |\n");
        b.append("| messages accepted in hooked chats / lost (no delivery) | ").append(accepted).append(" / ").append(lost).append(" |\n");
        b.append("| deliveries received / repeats | ").append(deliveries.sum()).append(" / ").append(duplicates()).append(" |\n");
        if (steadyFromNanos != Long.MAX_VALUE) {
            double secs = steadyWindow.toMillis() / 1000.0;
            b.append("| deliveries/s, steady second half | ").append(Math.round(steadyDeliveries.sum() / Math.max(1e-9, secs))).append(" |\n");
            b.append("| commit→delivered p50 / p99 / max, steady (ms) | ").append(ms(steadyLatency, 50)).append(" / ")
                    .append(ms(steadyLatency, 99)).append(" / ").append(ms(steadyLatency, 100)).append(" |\n");
        }
        b.append("| commit→delivered p50 / p99 / max, whole run (ms) | ").append(ms(latency, 50)).append(" / ").append(ms(latency, 99))
                .append(" / ").append(ms(latency, 100)).append(" |\n");
        b.append("| server hook backlog, max | ").append(backlogMax.get()).append(" |\n");
        if (outageEndedNanos > 0) {
            b.append("| outage | ").append(outageFor).append(" from ").append(outageAt).append(" |\n");
            b.append("| backlog drained after the receiver came back (s) | ")
                    .append(drainedNanos > 0 ? String.format("%.1f", (drainedNanos - outageEndedNanos) / 1e9) : "not within the budget").append(" |\n");
        }
        return b.toString();
    }

    public void write(Path dir) throws IOException {
        StringBuilder csv = new StringBuilder("epoch_ms,backlog\n");
        synchronized (backlogSeries) {
            backlogSeries.forEach(s -> csv.append(s[0]).append(',').append(s[1]).append('\n'));
        }
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("hook-backlog.csv"), csv.toString());
    }

    private static String ms(ConcurrentHistogram h, double p) {
        if (h.getTotalCount() == 0) {
            return "-";
        }
        return String.format("%.1f", (p >= 100 ? h.getMaxValue() : h.getValueAtPercentile(p)) / 1000.0);
    }

    @Override
    public void close() {
        if (receiver != null) {
            receiver.close();
        }
    }

    /** An HTTP server on localhost answering 200 to every delivery, that can be taken down and up on the same port. */
    final class HttpReceiver implements Receiver {
        private final int port;
        private volatile HttpServer server;

        HttpReceiver() throws IOException {
            server = open(0);
            port = server.getAddress().getPort();
        }

        private HttpServer open(int p) throws IOException {
            HttpServer s = HttpServer.create(new InetSocketAddress(InetAddress.getByName("localhost"), p), 512);
            s.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
            s.createContext("/", exchange -> {
                try (InputStream in = exchange.getRequestBody()) {
                    arrived(new String(in.readAllBytes(), StandardCharsets.UTF_8));
                    exchange.sendResponseHeaders(204, -1);
                }
                finally {
                    exchange.close();
                }
            });
            s.start();
            return s;
        }

        synchronized void down() {
            server.stop(0);
        }

        synchronized void up() {
            try {
                server = open(port);
            }
            catch (IOException e) {
                err.println("waterline-load: the hook receiver could not take its port back: " + e);
            }
        }

        @Override
        public Map<String, Object> hook(String chatId) {
            return Map.of("kind", "http", "url", "http://localhost:" + port + "/hooks/" + chatId);
        }

        @Override
        public void close() {
            server.stop(0);
        }
    }

    /** XREAD on the stream of this run in the Redis named by {@code --hook-broker} (redis://host:port/db). */
    final class RedisReceiver implements Receiver {
        private final io.lettuce.core.RedisClient client = io.lettuce.core.RedisClient.create(broker);
        private final String stream = "waterline-load:" + runId + ":hooks";
        private final Thread reader;
        private volatile boolean open = true;

        RedisReceiver() {
            var conn = client.connect();
            reader = Thread.ofPlatform().daemon().name("hook-redis-reader").start(() -> {
                String from = "0-0";
                while (open) {
                    try {
                        var entries = conn.sync().xread(io.lettuce.core.XReadArgs.Builder.block(500).count(1000),
                                io.lettuce.core.XReadArgs.StreamOffset.from(stream, from));
                        for (var e : entries) {
                            arrived(e.getBody().get("payload"));
                            from = e.getId();
                        }
                    }
                    catch (RuntimeException e) {
                        if (open) {
                            err.println("waterline-load: XREAD failed: " + e);
                        }
                    }
                }
                conn.close();
            });
        }

        @Override
        public Map<String, Object> hook(String chatId) {
            return Map.of("kind", "redis", "uri", broker, "stream", stream);
        }

        @Override
        public void close() {
            open = false;
            try {
                reader.join(2_000);
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            client.shutdown();
        }
    }

    /** A server-named queue bound to this run's exchange on the RabbitMQ of {@code --hook-broker}, consumed with acks. */
    final class AmqpReceiver implements Receiver {
        private final com.rabbitmq.client.Connection connection;
        private final String exchange = "waterline-load-" + runId;

        AmqpReceiver() throws Exception {
            com.rabbitmq.client.ConnectionFactory f = new com.rabbitmq.client.ConnectionFactory();
            f.setUri(broker);
            connection = f.newConnection("waterline-load");
            com.rabbitmq.client.Channel ch = connection.createChannel();
            ch.exchangeDeclare(exchange, "direct", false, true, null);
            String queue = ch.queueDeclare("", true, true, false, null).getQueue();
            ch.queueBind(queue, exchange, "hooks");
            ch.basicQos(500);
            ch.basicConsume(queue, false, (tag, d) -> {
                arrived(new String(d.getBody(), StandardCharsets.UTF_8));
                ch.basicAck(d.getEnvelope().getDeliveryTag(), false);
            }, tag -> { });
        }

        @Override
        public Map<String, Object> hook(String chatId) {
            return Map.of("kind", "amqp", "uri", broker, "exchange", exchange, "routingKey", "hooks");
        }

        @Override
        public void close() {
            try {
                connection.close(2_000);
            }
            catch (IOException e) {
                // closing anyway
            }
        }
    }

    /** A QoS 1 subscriber to this run's topic on the MQTT broker of {@code --hook-broker} (mqtt://host:port). */
    final class MqttReceiver implements Receiver {
        private final com.hivemq.client.mqtt.mqtt3.Mqtt3AsyncClient client;
        private final String topic = "waterline-load/" + runId + "/hooks";

        MqttReceiver() throws Exception {
            URI u = URI.create(broker);
            client = com.hivemq.client.mqtt.MqttClient.builder().useMqttVersion3().identifier("waterline-load-" + runId)
                    .serverHost(u.getHost()).serverPort(u.getPort()).buildAsync();
            client.connect().get(10, TimeUnit.SECONDS);
            client.subscribeWith().topicFilter(topic).qos(com.hivemq.client.mqtt.datatypes.MqttQos.AT_LEAST_ONCE)
                    .callback(m -> arrived(new String(m.getPayloadAsBytes(), StandardCharsets.UTF_8))).send().get(10, TimeUnit.SECONDS);
        }

        @Override
        public Map<String, Object> hook(String chatId) {
            return Map.of("kind", "mqtt", "uri", broker, "topic", topic);
        }

        @Override
        public void close() {
            client.disconnect();
        }
    }

    /** A core subscriber to this run's subject on the NATS server of {@code --hook-broker} (nats://host:port). */
    final class NatsReceiver implements Receiver {
        private final io.nats.client.Connection nc;
        private final String subject = "waterline-load." + runId + ".hooks";

        NatsReceiver() throws Exception {
            nc = io.nats.client.Nats.connect(broker);
            io.nats.client.Dispatcher d = nc.createDispatcher(m -> arrived(new String(m.getData(), StandardCharsets.UTF_8)));
            d.subscribe(subject);
            nc.flush(Duration.ofSeconds(5));
        }

        @Override
        public Map<String, Object> hook(String chatId) {
            return Map.of("kind", "nats", "url", broker, "subject", subject);
        }

        @Override
        public void close() {
            try {
                nc.close();
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

}
