package dev.waterline.presence.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import com.github.f4b6a3.ulid.UlidCreator;
import dev.waterline.lifecycle.Loops;
import dev.waterline.lifecycle.Workers;
import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.outbox.OutboxRow;
import dev.waterline.presence.ClusterProperties;
import dev.waterline.presence.Location;
import dev.waterline.presence.NodeBus;
import dev.waterline.redis.RedisKeys;
import dev.waterline.session.ClientSession;
import dev.waterline.session.SessionRegistry;
import io.micrometer.core.instrument.Counter;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;
import org.springframework.stereotype.Component;
import tools.jackson.databind.JsonNode;

/**
 * The cluster's bus: one channel per node ({@code wl:chan:<node>}, Redis pub/sub) carrying what
 * other nodes hand to this one, and one channel every node listens to ({@code wl:chan-all}) for
 * broadcasts, handed as they come to their receiver (which must only queue them); the node's own
 * channel's messages are decoded on one worker of {@link Loops} from a bounded inbox
 * (full: the message is dropped and counted; every message is best effort, see {@link NodeBus}).
 * {@code rows} go to the delivery capability; {@code close} closes the named connection if it is
 * still this node's registered one and answers {@code closed}; {@code frame} is written to the
 * named connection.
 *
 * <p>Subscribes before {@link RedisPresence} joins the cluster (nothing is handed to a node that
 * is not listening yet) and unsubscribes after it left. Meanwhile, after this node withdrew its
 * users, a hand-over may still arrive: its recipient holds no connection here (the fast path
 * forgets a ghost epoch only when Redis places the user on no node), owes nothing (the withdrawal
 * took the sets), and the other nodes' pollers deliver the row or the client resyncs it.
 */
@Component
@ConditionalOnProperty(name = "waterline.cluster.enabled", havingValue = "true")
class RedisNodeBus implements NodeBus, SmartLifecycle {

    static final String INBOX_LOOP = "node_inbox";
    private static final int INBOX = 16_384;

    private static final RedisScript<Long> NODE_ALIVE = RedisScript.of(RedisPresence.lua("node_alive"), Long.class);

    private final StringRedisTemplate redis;
    private final RedisConnectionFactory connections;
    private final ClusterProperties properties;
    private final SessionRegistry sessions;
    private final Loops loops;
    private final String node;
    private final Map<String, CompletableFuture<Boolean>> awaitingClosed = new ConcurrentHashMap<>();
    private final BlockingQueue<String> inbox = new ArrayBlockingQueue<>(INBOX);
    private final Counter dropped;
    private volatile Deliveries deliveries = (rows, poller) -> { };
    private volatile java.util.function.Consumer<String> broadcasts = m -> { };
    private volatile boolean running;
    private RedisMessageListenerContainer listener;
    private final List<Thread> threads = new ArrayList<>();

    RedisNodeBus(StringRedisTemplate redis, RedisConnectionFactory connections, ClusterProperties properties,
                 SessionRegistry sessions, Loops loops, WaterlineMetrics metrics) {
        this.redis = redis;
        this.connections = connections;
        this.properties = properties;
        this.sessions = sessions;
        this.loops = loops;
        this.node = properties.nodeId();
        this.dropped = metrics.counter("waterline.cluster.inbox.dropped",
                "messages from other nodes dropped because this node's inbox was full (deliveries: the poller repeats them)");
    }

    static String channel(String node) {
        return "wl:chan:" + node;
    }

    /** The channel every node listens to. */
    static final String ALL = "wl:chan-all";

    @Override
    public CompletableFuture<Boolean> close(Location where, int code, String reason) {
        Long alive = redis.execute(NODE_ALIVE, List.of(RedisKeys.NODES), where.node(),
                Long.toString(properties.nodeTimeout().toMillis()));
        if (alive == null || alive != 1L) {
            return CompletableFuture.completedFuture(false);
        }
        String id = UlidCreator.getMonotonicUlid().toString();
        CompletableFuture<Boolean> closed = new CompletableFuture<>();
        awaitingClosed.put(id, closed);
        redis.convertAndSend(channel(where.node()), Wire.close(where.userId(), where.sessionId(), code, reason, node, id));
        return closed.completeOnTimeout(false, properties.evictTimeout().toMillis(), TimeUnit.MILLISECONDS)
                .whenComplete((ok, e) -> awaitingClosed.remove(id));
    }

    @Override
    public void deliver(String to, List<OutboxRow> rows, boolean poller) {
        redis.convertAndSend(channel(to), Wire.rows(rows, poller));
    }

    @Override
    public void send(Location where, String frame) {
        redis.convertAndSend(channel(where.node()), Wire.frame(where.userId(), where.sessionId(), frame));
    }

    @Override
    public void broadcast(String message) {
        redis.convertAndSend(ALL, message);
    }

    @Override
    public void onBroadcast(java.util.function.Consumer<String> receiver) {
        this.broadcasts = receiver;
    }

    @Override
    public void onDeliveries(Deliveries deliveries) {
        this.deliveries = deliveries;
    }

    private void received(String message) {
        JsonNode m = Wire.JSON.readTree(message);
        switch (m.path("t").asString()) {
            case "rows" -> deliveries.arrived(Wire.rows(m), m.path("poller").asBoolean());
            case "close" -> {
                String user = m.get("user").asString();
                String session = m.get("session").asString();
                ClientSession s = sessions.underUserLock(user, () -> {
                    ClientSession current = sessions.get(user);
                    if (current != null && current.sessionId().equals(session)) {
                        sessions.unregister(current);
                        return current;
                    }
                    return null;
                });
                String reply = channel(m.get("reply").asString());
                String answer = Wire.closed(m.get("id").asString());
                if (s == null) {
                    redis.convertAndSend(reply, answer);
                }
                else {
                    // answered once the close frame is on its way: the asking node welcomes its
                    // connection only after that (off the inbox's thread: a close may wait a moment)
                    int code = m.get("code").asInt();
                    String reason = m.get("reason").asString();
                    Thread.startVirtualThread(() -> loops.pass(INBOX_LOOP, () -> {
                        s.closeNow(code, reason);
                        redis.convertAndSend(reply, answer);
                    }));
                }
            }
            case "closed" -> {
                CompletableFuture<Boolean> waiting = awaitingClosed.get(m.get("id").asString());
                if (waiting != null) {
                    waiting.complete(true);
                }
            }
            case "frame" -> {
                ClientSession s = sessions.get(m.get("user").asString());
                if (s != null && s.sessionId().equals(m.get("session").asString())) {
                    s.send(m.get("frame").asString());
                }
            }
            default -> throw new IllegalArgumentException("unknown message from another node: " + message);
        }
    }

    private void takeOne() throws InterruptedException {
        String message = inbox.poll(200, TimeUnit.MILLISECONDS);
        if (message != null) {
            received(message);
        }
    }

    @Override
    public void start() {
        running = true;
        listener = new RedisMessageListenerContainer();
        listener.setConnectionFactory(connections);
        // messages are taken off the connection's thread at once; the inbox's worker decodes them
        listener.setTaskExecutor(task -> task.run());
        listener.addMessageListener((message, pattern) -> {
            if (!inbox.offer(new String(message.getBody(), StandardCharsets.UTF_8))) {
                dropped.increment();
            }
        }, new ChannelTopic(channel(node)));
        // broadcasts go straight to their receiver, which queues them itself: a burst of them never
        // delays or crowds out this node's deliveries and closes in the inbox
        listener.addMessageListener((message, pattern) -> broadcasts.accept(new String(message.getBody(), StandardCharsets.UTF_8)),
                new ChannelTopic(ALL));
        listener.afterPropertiesSet();
        listener.start();
        threads.add(loops.start(INBOX_LOOP, "node-inbox", () -> running, this::takeOne));
    }

    @Override
    public void stop() {
        running = false;
        Workers.stop(threads, Duration.ofSeconds(2));
        threads.clear();
        try {
            listener.stop();
            listener.destroy();
        }
        catch (Exception e) {
            loops.failed(INBOX_LOOP, "closing the channel subscription", e);
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Starts before presence joins the cluster (and so before delivery and the gateway), stops after it left. */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 260;
    }
}
