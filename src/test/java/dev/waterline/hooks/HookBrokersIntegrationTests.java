package dev.waterline.hooks;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import com.hivemq.client.mqtt.MqttClient;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3AsyncClient;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import dev.waterline.support.Api;
import dev.waterline.support.WsClient;
import io.moquette.broker.Server;
import io.moquette.broker.config.IConfig;
import io.moquette.broker.config.MemoryConfig;
import io.nats.client.Connection;
import io.nats.client.JetStreamManagement;
import io.nats.client.Message;
import io.nats.client.Nats;
import io.nats.client.Subscription;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Every broker kind against a real broker, each in a namespace of this run (an exchange, a topic,
 * a subject or a stream named for it): the machine's RabbitMQ, Mosquitto and NATS when they answer
 * on localhost; otherwise an embedded Java broker where one exists (Moquette for MQTT, a
 * {@code nats-server} binary on the PATH for NATS); Kafka on an in-JVM KRaft broker, Redis Streams
 * on the test's embedded Redis. A kind with neither is skipped with the reason in the report.
 */
@HooksTestContext
class HookBrokersIntegrationTests {

    static final Duration WAIT = Duration.ofSeconds(60);
    static final String RUN = UUID.randomUUID().toString().substring(0, 8);

    static EmbeddedKafkaKraftBroker kafka;
    static Server moquette;
    static int moquettePort;
    static Process natsServer;
    static int natsPort;

    @LocalServerPort
    int port;

    @Value("${spring.data.redis.port}")
    int redisPort;

    Api api;

    @BeforeEach
    void setUp() {
        api = new Api(port);
    }

    @AfterAll
    static void stopBrokers() {
        if (kafka != null) {
            kafka.destroy();
        }
        if (moquette != null) {
            moquette.stopServer();
        }
        if (natsServer != null) {
            natsServer.destroy();
        }
    }

    static boolean answers(int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("localhost", port), 500);
            return true;
        }
        catch (IOException e) {
            return false;
        }
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getByName("localhost"))) {
            return s.getLocalPort();
        }
    }

    static void skip(String why) {
        System.out.println("SKIPPED (visible on purpose): " + why);
        Assumptions.abort(why);
    }

    /** A hook created by alice, and the ids of the messages she sent after it. */
    record Sent(String hookId, String chat, String token, List<String> messageIds) {
    }

    Sent send(String prefix, Map<String, Object> hook, int n) {
        Api.Pair p = api.pair(prefix);
        Api.Response created = api.post("/api/chats/" + p.chat() + "/hooks", p.alice(), hook);
        assertThat(created.status()).as(created.text()).isEqualTo(201);
        String hookId = created.body().get("hookId").asString();
        List<String> ids = new ArrayList<>();
        try (WsClient alice = WsClient.connectWelcomed(port, p.alice())) {
            for (int i = 0; i < n; i++) {
                alice.sendMessage(prefix + i, p.chat(), "to a broker " + i);
            }
            for (int i = 0; i < n; i++) {
                JsonNode a = alice.answer(prefix + i);
                assertThat(a.get("type").asString()).isEqualTo("accepted");
                ids.add(a.get("messageId").asString());
            }
        }
        return new Sent(hookId, p.chat(), p.alice(), ids);
    }

    JsonNode hook(Sent s) {
        return api.get("/api/hooks/" + s.hookId(), s.token()).body();
    }

    /** Every delivery of the hook done (confirmed by its broker), none dead. */
    void awaitDone(Sent s) {
        await().atMost(WAIT).until(() -> hook(s).get("pending").asLong() == 0);
        assertThat(hook(s).get("dead").asLong()).isZero();
    }

    static Set<String> messageIds(List<String> payloads) {
        Set<String> ids = new TreeSet<>();
        payloads.forEach(p -> ids.add(Api.JSON.readTree(p).get("messageId").asString()));
        return ids;
    }

    @Test
    void anAmqpHookPublishesWithConfirmsOnlyWhereTheExchangeRoutesIt() throws Exception {
        if (!answers(5672)) {
            skip("no RabbitMQ on localhost:5672, and no embedded AMQP 0-9-1 broker in Java to fall back to");
        }
        ConnectionFactory f = new ConnectionFactory();
        f.setUri("amqp://guest:guest@localhost:5672/%2F");
        try (com.rabbitmq.client.Connection c = f.newConnection("waterline-test"); Channel ch = c.createChannel()) {
            String exchange = "waterline-test-" + RUN;
            String queue = ch.queueDeclare("", false, true, true, null).getQueue();
            Map<String, Object> hook = Map.of("kind", "amqp", "uri", "amqp://guest:guest@localhost:5672/%2F",
                    "exchange", exchange, "routingKey", "hooks");
            // the exchange exists but routes to no queue yet: each publish is confirmed, and returned
            // (mandatory) before its confirm, so nothing is done
            ch.exchangeDeclare(exchange, "direct", false, false, null);
            Sent s = send("hk-amqp", hook, 3);
            await().atMost(WAIT).until(() -> hook(s).get("failures").asInt() > 0 || "open".equals(hook(s).get("breaker").asString()));
            assertThat(hook(s).get("pending").asLong()).isEqualTo(3);
            ch.queueBind(queue, exchange, "hooks");

            List<String> payloads = new ArrayList<>();
            List<String> keys = new ArrayList<>();
            await().atMost(WAIT).until(() -> {
                GetResponse r;
                while ((r = ch.basicGet(queue, true)) != null) {
                    payloads.add(new String(r.getBody(), StandardCharsets.UTF_8));
                    keys.add(r.getProps().getMessageId());
                    assertThat(r.getProps().getDeliveryMode()).isEqualTo(2);
                    assertThat(r.getProps().getHeaders().get("Waterline-Idempotency-Key").toString()).isEqualTo(r.getProps().getMessageId());
                }
                return messageIds(payloads).containsAll(s.messageIds());
            });
            assertThat(keys).allMatch(k -> k.startsWith(s.hookId() + ":"));
            awaitDone(s);
            ch.exchangeDelete(exchange);
        }
    }

    @Test
    void anMqttHookPublishesAtQosOneToItsTopic() throws Exception {
        int mqttPort;
        if (answers(1883)) {
            mqttPort = 1883;
        }
        else {
            if (moquette == null) {
                moquettePort = freePort();
                Properties p = new Properties();
                p.setProperty(IConfig.HOST_PROPERTY_NAME, "localhost");
                p.setProperty(IConfig.PORT_PROPERTY_NAME, Integer.toString(moquettePort));
                p.setProperty(IConfig.PERSISTENCE_ENABLED_PROPERTY_NAME, "false");
                p.setProperty(IConfig.DATA_PATH_PROPERTY_NAME, Files.createTempDirectory("moquette").toString());
                moquette = new Server();
                moquette.startServer(new MemoryConfig(p));
            }
            mqttPort = moquettePort;
        }
        String topic = "waterline-test/" + RUN + "/hooks";
        List<String> payloads = Collections.synchronizedList(new ArrayList<>());
        Mqtt3AsyncClient sub = MqttClient.builder().useMqttVersion3().identifier("waterline-test-" + RUN)
                .serverHost("localhost").serverPort(mqttPort).buildAsync();
        sub.connect().get(10, TimeUnit.SECONDS);
        try {
            sub.subscribeWith().topicFilter(topic).qos(MqttQos.AT_LEAST_ONCE)
                    .callback(m -> payloads.add(new String(m.getPayloadAsBytes(), StandardCharsets.UTF_8))).send().get(10, TimeUnit.SECONDS);
            Sent s = send("hk-mqtt", Map.of("kind", "mqtt", "uri", "mqtt://localhost:" + mqttPort, "topic", topic), 3);
            await().atMost(WAIT).until(() -> messageIds(List.copyOf(payloads)).containsAll(s.messageIds()));
            awaitDone(s);
        }
        finally {
            sub.disconnect();
        }
    }

    int natsPort() throws Exception {
        if (answers(4222)) {
            return 4222;
        }
        if (natsServer == null) {
            Path binary = Path.of("/usr/sbin/nats-server");
            if (!Files.isExecutable(binary)) {
                binary = Path.of("/usr/bin/nats-server");
            }
            if (!Files.isExecutable(binary)) {
                skip("no NATS on localhost:4222 and no nats-server binary to start (NATS has no embedded Java server)");
            }
            natsPort = freePort();
            Path store = Files.createTempDirectory("nats");
            natsServer = new ProcessBuilder(binary.toString(), "-a", "127.0.0.1", "-p", Integer.toString(natsPort), "-js", "-sd", store.toString())
                    .redirectErrorStream(true).redirectOutput(store.resolve("nats.log").toFile()).start();
            await().atMost(Duration.ofSeconds(20)).until(() -> answers(natsPort));
        }
        return natsPort;
    }

    @Test
    void aNatsHookPublishesAndFlushesOrWaitsForTheJetStreamAckWithTheKeyAsMsgId() throws Exception {
        int p = natsPort();
        try (Connection nc = Nats.connect("nats://localhost:" + p)) {
            String subject = "waterline-test." + RUN + ".core";
            Subscription sub = nc.subscribe(subject);
            nc.flush(Duration.ofSeconds(5));
            Sent core = send("hk-nats", Map.of("kind", "nats", "url", "nats://localhost:" + p, "subject", subject), 3);
            List<String> payloads = new ArrayList<>();
            await().atMost(WAIT).until(() -> {
                Message m;
                while ((m = sub.nextMessage(Duration.ofMillis(100))) != null) {
                    payloads.add(new String(m.getData(), StandardCharsets.UTF_8));
                    assertThat(m.getHeaders().getFirst("Waterline-Idempotency-Key")).startsWith(core.hookId() + ":");
                }
                return messageIds(payloads).containsAll(core.messageIds());
            });
            awaitDone(core);

            JetStreamManagement jsm = nc.jetStreamManagement();
            String stream = "WATERLINE_TEST_" + RUN.toUpperCase(java.util.Locale.ROOT);
            String jsSubject = "waterline-test." + RUN + ".js";
            jsm.addStream(StreamConfiguration.builder().name(stream).subjects(jsSubject).storageType(StorageType.Memory).build());
            try {
                Sent js = send("hk-jetstream", Map.of("kind", "nats", "url", "nats://localhost:" + p, "subject", jsSubject, "jetstream", true), 3);
                awaitDone(js);
                assertThat(jsm.getStreamInfo(stream).getStreamState().getMsgCount()).isEqualTo(3);
                Set<String> ids = new TreeSet<>();
                for (long seq = 1; seq <= 3; seq++) {
                    var m = jsm.getMessage(stream, seq);
                    assertThat(m.getHeaders().getFirst("Nats-Msg-Id")).startsWith(js.hookId() + ":");
                    ids.add(Api.JSON.readTree(new String(m.getData(), StandardCharsets.UTF_8)).get("messageId").asString());
                }
                assertThat(ids).containsExactlyInAnyOrderElementsOf(js.messageIds());
            }
            finally {
                jsm.deleteStream(stream);
            }
        }
    }

    @Test
    void aKafkaHookIsDoneOnAnAckFromEveryInSyncReplicaKeyedByChat() throws Exception {
        String topic = "waterline-test-" + RUN;
        if (kafka == null) {
            kafka = new EmbeddedKafkaKraftBroker(1, 1, topic);
            kafka.afterPropertiesSet();
        }
        String servers = kafka.getBrokersAsString().replace("127.0.0.1", "localhost");
        Sent s = send("hk-kafka", Map.of("kind", "kafka", "bootstrapServers", servers, "topic", topic), 3);
        awaitDone(s);
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, servers);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "waterline-test-" + RUN);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
            consumer.subscribe(List.of(topic));
            List<ConsumerRecord<String, String>> records = new ArrayList<>();
            await().atMost(WAIT).until(() -> {
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
                return records.size() >= 3;
            });
            assertThat(messageIds(records.stream().map(ConsumerRecord::value).toList())).containsExactlyInAnyOrderElementsOf(s.messageIds());
            for (ConsumerRecord<String, String> r : records) {
                assertThat(r.key()).isEqualTo(s.chat());
                assertThat(new String(r.headers().lastHeader("Waterline-Idempotency-Key").value(), StandardCharsets.UTF_8))
                        .startsWith(s.hookId() + ":");
            }
        }
    }

    @Test
    void aRedisHookAddsOneStreamEntryPerDelivery() {
        String stream = "waterline-test:" + RUN + ":hooks";
        String uri = "redis://localhost:" + redisPort + "/40";
        Sent s = send("hk-redis", Map.of("kind", "redis", "uri", uri, "stream", stream), 3);
        awaitDone(s);
        io.lettuce.core.RedisClient client = io.lettuce.core.RedisClient.create(uri);
        try (var c = client.connect()) {
            var entries = c.sync().xrange(stream, io.lettuce.core.Range.create("-", "+"));
            assertThat(entries).hasSize(3);
            assertThat(messageIds(entries.stream().map(e -> e.getBody().get("payload")).toList()))
                    .containsExactlyInAnyOrderElementsOf(s.messageIds());
            assertThat(entries).allMatch(e -> e.getBody().get("idempotencyKey").startsWith(s.hookId() + ":"));
            c.sync().del(stream);
        }
        finally {
            client.shutdown();
        }
    }
}
