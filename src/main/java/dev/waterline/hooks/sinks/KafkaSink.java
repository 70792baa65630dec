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

import dev.waterline.hooks.AddressGuard;
import dev.waterline.hooks.HookProperties;
import dev.waterline.hooks.Sink;
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
 */
@Component
class KafkaSink implements Sink {

    private final AddressGuard guard;
    private final HookProperties properties;
    private final Connections<KafkaProducer<String, byte[]>> producers = new Connections<>("kafka",
            p -> p.close(java.time.Duration.ofSeconds(2)));

    KafkaSink(AddressGuard guard, HookProperties properties) {
        this.guard = guard;
        this.properties = properties;
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
        KafkaProducer<String, byte[]> producer;
        try {
            producer = producers.get(pinned, this::open);
        }
        catch (RuntimeException failed) {
            return Outcome.retry("could not create the producer: " + Outcome.describe(failed));
        }
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(call.target().get("topic"), null, call.chatId(),
                call.payload().getBytes(StandardCharsets.UTF_8),
                List.of(new RecordHeader("Waterline-Idempotency-Key", call.idempotencyKey().getBytes(StandardCharsets.UTF_8)),
                        new RecordHeader("Waterline-Attempt", Integer.toString(call.attempt()).getBytes(StandardCharsets.UTF_8))));
        try {
            producer.send(record).get(properties.callTimeout().toMillis() + 1_000, TimeUnit.MILLISECONDS);
            return Outcome.DONE;
        }
        catch (TimeoutException timeout) {
            return Outcome.retry("no ack from Kafka within " + properties.callTimeout().toMillis() + " ms");
        }
        catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            return Outcome.retry("interrupted (the server is stopping)");
        }
        catch (ExecutionException failed) {
            Throwable cause = failed.getCause();
            return cause instanceof RetriableException || cause instanceof org.apache.kafka.common.errors.TimeoutException
                    ? Outcome.retry(Outcome.describe(cause)) : new Outcome.Permanent(Outcome.describe(cause));
        }
        catch (RuntimeException failed) {
            producers.discard(pinned, producer);
            return Outcome.retry(Outcome.describe(failed));
        }
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
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "waterline-hooks");
        p.put(ProducerConfig.LINGER_MS_CONFIG, 1);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, timeout);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) timeout);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) timeout + 1);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        return new KafkaProducer<>(p);
    }

    @Override
    public void close() {
        producers.closeAll();
    }
}
