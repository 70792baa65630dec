package dev.waterline.hooks.sinks;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

import dev.waterline.hooks.AddressGuard;
import dev.waterline.hooks.HookProperties;
import dev.waterline.hooks.Sink;
import dev.waterline.lifecycle.ThrottledLog;
import dev.waterline.metrics.WaterlineMetrics;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.springframework.stereotype.Component;

/**
 * {@code kafka} hooks with kafka-clients: an idempotent producer with {@code acks=all}, done when
 * every in-sync replica has the record. The record's key is the chat (a chat's deliveries share a
 * partition), its headers {@code Waterline-Idempotency-Key} and {@code Waterline-Attempt}.
 * Retriable broker errors and timeouts are retried; any other (an unknown or invalid topic name, a
 * record too large, a denied authorization) is permanent.
 *
 * <p>The bootstrap servers are checked by the guard and given to the producer as the checked
 * addresses; the brokers' own advertised listeners, which the producer connects to next, are the
 * cluster's configuration, not the hook's, and are not checked again.
 *
 * <p>Producers. One per checked set of bootstrap servers, each with a network thread and a
 * selector of its own, which keeps reconnecting for as long as the producer is open: so at most
 * {@code kafka-max-producers} of them, those still closing included ({@link Connections}; a call
 * needing one more while every one is in use is not made, and tried again soon; while targets wait,
 * the producers are shared in turns of {@code call-timeout}), each closed once
 * unused for {@code kafka-producer-idle}, or at once when the hooks that used it are deleted on
 * this node. A broker that cannot be reached is retried by the client with exponential backoff up
 * to 30 s ({@code reconnect.backoff.*}, {@code retry.backoff.max.ms}); its own per-attempt
 * warnings are off ({@code NetworkClient} logs at ERROR, application.properties), and ours come at
 * most once a second, every failure being in the delivery's last error and in
 * {@code waterline_hook_deliveries_total{kind="kafka",outcome="retry"}}.
 * Each producer has a client id of its own ({@code waterline-hooks-<n>}, in its thread's name), so
 * their JMX names never clash.
 */
@Component
class KafkaSink implements Sink {

    private static final Log log = LogFactory.getLog(KafkaSink.class);
    private static final int BACKOFF_MAX_MS = 30_000;

    private final AddressGuard guard;
    private final HookProperties properties;
    private final Connections<KafkaProducer<String, byte[]>> producers;
    private final AtomicLong opened = new AtomicLong();
    private final ThrottledLog failures = new ThrottledLog();

    KafkaSink(AddressGuard guard, HookProperties properties, WaterlineMetrics metrics) {
        this.guard = guard;
        this.properties = properties;
        this.producers = new Connections<>("kafka", properties.kafkaMaxProducers(), properties.kafkaProducerIdle(), properties.callTimeout(),
                // closed only once no call holds it: nothing of its own is left to send, so at once
                p -> p.close(java.time.Duration.ZERO), metrics);
    }

    @Override
    public String kind() {
        return "kafka";
    }

    @Override
    public Map<String, String> target(Map<String, String> fields) throws AddressGuard.Refused {
        String servers = Fields.text(fields, "bootstrapServers", 1, 2048, null);
        List<String> hosts = AddressGuard.hostsOf(servers);
        if (hosts.isEmpty() || hosts.stream().anyMatch(String::isBlank)) {
            throw new IllegalArgumentException("bootstrapServers must be host:port[,host:port...]");
        }
        for (String s : servers.split(",")) {
            String p = s.strip().substring(s.strip().lastIndexOf(':') + 1);
            if (!s.contains(":") || p.isEmpty() || !p.chars().allMatch(Character::isDigit) || p.length() > 5) {
                throw new IllegalArgumentException("bootstrapServers must be host:port[,host:port...]");
            }
        }
        for (String h : hosts) {
            Fields.check(h, guard);
        }
        String topic = Fields.text(fields, "topic", 1, 249, null);
        if (!topic.matches("[a-zA-Z0-9._-]+")) {
            throw new IllegalArgumentException("topic may hold letters, digits, '.', '_' and '-' only");
        }
        Map<String, String> target = new LinkedHashMap<>();
        target.put("bootstrapServers", servers);
        target.put("topic", topic);
        return target;
    }

    @Override
    public Outcome deliver(Call call) {
        String pinned;
        try {
            pinned = pinned(call.target().get("bootstrapServers"));
        }
        catch (AddressGuard.Refused refused) {
            return new Outcome.Permanent(refused.getMessage());
        }
        catch (UnknownHostException unresolved) {
            return Outcome.retry(Outcome.describe(unresolved));
        }
        Connections<KafkaProducer<String, byte[]>>.Lease lease;
        try {
            lease = producers.lease(pinned, call.hookId(), this::open);
        }
        catch (Connections.Full full) {
            return new Outcome.NotMade(full.getMessage() + " (waterline.hooks.kafka-max-producers)");
        }
        catch (RuntimeException failed) {
            return Outcome.retry("could not create the producer: " + Outcome.describe(failed));
        }
        // from here on the lease is held: whatever fails, the finally below gives it back
        try {
            ProducerRecord<String, byte[]> record;
            try {
                record = record(call);
            }
            catch (RuntimeException bad) {
                // the delivery's fields, not the producer, failed: nothing to discard
                return Outcome.retry("could not build the Kafka record: " + Outcome.describe(bad));
            }
            lease.connection().send(record).get(properties.callTimeout().toMillis() + 1_000, TimeUnit.MILLISECONDS);
            return Outcome.DONE;
        }
        catch (TimeoutException timeout) {
            return failed(pinned, "no ack from Kafka within " + properties.callTimeout().toMillis() + " ms");
        }
        catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            return Outcome.retry("interrupted (the server is stopping)");
        }
        catch (ExecutionException failed) {
            Throwable cause = failed.getCause();
            return cause instanceof RetriableException || cause instanceof org.apache.kafka.common.errors.TimeoutException
                    ? failed(pinned, Outcome.describe(cause)) : new Outcome.Permanent(Outcome.describe(cause));
        }
        catch (RuntimeException failed) {
            lease.discard();
            return failed(pinned, Outcome.describe(failed));
        }
        finally {
            lease.close();
        }
    }

    /** The record of {@code call}: keyed by its chat, its idempotency key and attempt as headers. */
    static ProducerRecord<String, byte[]> record(Call call) {
        return new ProducerRecord<>(call.target().get("topic"), null, call.chatId(), call.payload().getBytes(StandardCharsets.UTF_8),
                List.of(new RecordHeader("Waterline-Idempotency-Key", call.idempotencyKey().getBytes(StandardCharsets.UTF_8)),
                        new RecordHeader("Waterline-Attempt", Integer.toString(call.attempt()).getBytes(StandardCharsets.UTF_8))));
    }

    /** A retry, logged at most once a second for the whole sink (a cluster that cannot be reached fails every call). */
    private Outcome failed(String servers, String error) {
        long held = failures.admit();
        if (held >= 0) {
            log.info("kafka hook: no ack from " + servers + ": " + error + ThrottledLog.more(held));
        }
        return Outcome.retry(error);
    }

    /** The servers with each host replaced by the address the guard checked. */
    private String pinned(String servers) throws AddressGuard.Refused, UnknownHostException {
        List<String> out = new ArrayList<>();
        for (String s : servers.split(",")) {
            String t = s.strip();
            if (t.isEmpty()) {
                continue;
            }
            int colon = t.lastIndexOf(':');
            InetAddress a = guard.check(t.substring(0, colon));
            out.add(AddressGuard.uriHost(a) + t.substring(colon));
        }
        return String.join(",", out);
    }

    private KafkaProducer<String, byte[]> open(String servers) {
        Properties p = new Properties();
        long timeout = properties.callTimeout().toMillis();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, servers);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "waterline-hooks-" + opened.incrementAndGet());
        p.put(ProducerConfig.LINGER_MS_CONFIG, 1);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, timeout);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) timeout);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) timeout + 1);
        // A broker that cannot be reached: connection attempts from 1 s apart, doubling to 30 s
        // (the client's defaults try every 50 ms to 1 s, each attempt a warning), failed requests
        // (metadata included) retried from 100 ms doubling to 30 s, a connection attempt given
        // connect-timeout; a topic unused for the producer's idle time leaves its metadata
        p.put(ProducerConfig.RECONNECT_BACKOFF_MS_CONFIG, 1_000);
        p.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, BACKOFF_MAX_MS);
        p.put(ProducerConfig.RETRY_BACKOFF_MAX_MS_CONFIG, BACKOFF_MAX_MS);
        p.put(ProducerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG, properties.connectTimeout().toMillis());
        p.put(ProducerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG, (long) BACKOFF_MAX_MS);
        p.put(ProducerConfig.METADATA_MAX_IDLE_CONFIG, Math.max(5_000, properties.kafkaProducerIdle().toMillis()));
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        return new KafkaProducer<>(p);
    }

    @Override
    public void forget(String hookId) {
        producers.forget(hookId);
    }

    @Override
    public void closeIdle() {
        producers.closeIdle();
    }

    @Override
    public void close() {
        producers.closeAll();
    }
}
