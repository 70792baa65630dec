package dev.waterline.streams.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import com.github.f4b6a3.ulid.UlidCreator;
import dev.waterline.lifecycle.Loops;
import dev.waterline.streams.StreamSignals;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;
import org.springframework.stereotype.Component;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@link StreamSignals} of the cluster: one message per commit of appends on the Redis channel
 * {@code wl:streams}, {@code {"from":<this process>,"s":[[streamId,lastSeq,state],…]}}, which every
 * node subscribes to and filters against the streams it has tails for. One channel rather than one
 * per stream: no subscription to race with a tail's creation, and a message per commit batch, not
 * per stream. A publish that fails is counted, not retried (the tails' poll is the authority).
 * Publishing happens on a thread of its own, never the appender's: a Redis that hangs delays
 * signals (the poll covers them), not commits; past {@link #MAX_QUEUED} waiting messages the new
 * ones are dropped and counted.
 */
@Component
@ConditionalOnProperty(name = "waterline.cluster.enabled", havingValue = "true")
class RedisStreamSignals implements StreamSignals, SmartLifecycle {

    static final String CHANNEL = "wl:streams";
    static final String LOOP = "stream_signals";
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final StringRedisTemplate redis;
    private final RedisConnectionFactory connections;
    private final Loops loops;
    private final String self = UlidCreator.getMonotonicUlid().toString();
    private volatile Consumer<List<Signal>> listener = s -> { };
    private RedisMessageListenerContainer container;
    private volatile boolean running;
    static final int MAX_QUEUED = 10_000;
    private final java.util.concurrent.ThreadPoolExecutor publisher = new java.util.concurrent.ThreadPoolExecutor(1, 1, 0,
            java.util.concurrent.TimeUnit.SECONDS, new java.util.concurrent.LinkedBlockingQueue<>(MAX_QUEUED),
            Thread.ofPlatform().daemon().name("stream-signals").factory(), (task, pool) -> dropped());

    private void dropped() {
        loops.failed(LOOP, "a stream signal dropped: " + MAX_QUEUED + " are waiting for Redis (the tails' poll covers it)",
                new java.util.concurrent.RejectedExecutionException("signal queue full"));
    }

    RedisStreamSignals(StringRedisTemplate redis, RedisConnectionFactory connections, Loops loops) {
        this.redis = redis;
        this.connections = connections;
        this.loops = loops;
        loops.declare(LOOP);
    }

    @Override
    public void changed(List<Signal> signals) {
        if (signals.isEmpty()) {
            return;
        }
        ObjectNode m = JSON.createObjectNode().put("from", self);
        ArrayNode list = m.putArray("s");
        for (Signal s : signals) {
            list.addArray().add(s.streamId()).add(s.lastSeq()).add(s.state());
        }
        String message = JSON.writeValueAsString(m);
        publisher.execute(() -> loops.pass(LOOP, () -> redis.convertAndSend(CHANNEL, message)));
    }

    @Override
    public void listen(Consumer<List<Signal>> listener) {
        this.listener = listener;
    }

    private void received(String message) {
        JsonNode m = JSON.readTree(message);
        if (self.equals(m.path("from").asString())) {
            return;
        }
        List<Signal> signals = new ArrayList<>(m.get("s").size());
        for (JsonNode s : m.get("s")) {
            signals.add(new Signal(s.get(0).asString(), s.get(1).asLong(), s.get(2).asString()));
        }
        listener.accept(signals);
    }

    @Override
    public void start() {
        running = true;
        container = new RedisMessageListenerContainer();
        container.setConnectionFactory(connections);
        // the listener only queues work on the tails: quick, so it runs on the connection's thread
        container.setTaskExecutor(Runnable::run);
        container.addMessageListener((message, pattern) ->
                loops.pass(LOOP, () -> received(new String(message.getBody(), StandardCharsets.UTF_8))), new ChannelTopic(CHANNEL));
        container.afterPropertiesSet();
        container.start();
    }

    @Override
    public void stop() {
        running = false;
        publisher.shutdown();
        try {
            container.stop();
            container.destroy();
        }
        catch (Exception e) {
            loops.failed(LOOP, "closing the stream signal subscription", e);
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Stops after the appender (a lower phase stops later), so its last commits are still signalled. */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 20;
    }
}
