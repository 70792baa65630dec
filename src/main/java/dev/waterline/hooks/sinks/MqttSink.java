package dev.waterline.hooks.sinks;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import com.github.f4b6a3.ulid.UlidCreator;
import com.hivemq.client.mqtt.MqttClient;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3AsyncClient;
import com.hivemq.client.mqtt.mqtt3.Mqtt3ClientBuilder;
import com.hivemq.client.mqtt.mqtt3.message.auth.Mqtt3SimpleAuth;
import dev.waterline.hooks.AddressGuard;
import dev.waterline.hooks.HookProperties;
import dev.waterline.metrics.WaterlineMetrics;
import org.springframework.stereotype.Component;

/**
 * {@code mqtt} hooks with the HiveMQ MQTT client: a QoS 1 publish, done on the broker's
 * {@code PUBACK}. MQTT 3.1.1, which every broker speaks (Mosquitto, Moquette), has no message
 * properties: the idempotency key is in the payload ({@code hookId} and {@code messageId}, and
 * {@code userId} for an offline event), not beside it.
 *
 * <p>One client per checked address and URI, with a client identifier of its own (two nodes must
 * not share one: the broker would disconnect the older), credentials from the URI.
 */
@Component
class MqttSink extends BrokerSink<Mqtt3AsyncClient> {

    static final Map<String, Integer> SCHEMES = Map.of("mqtt", 1883, "tcp", 1883, "mqtts", 8883, "ssl", 8883);

    MqttSink(AddressGuard guard, HookProperties properties, WaterlineMetrics metrics) {
        super("uri", SCHEMES, guard, properties, metrics, c -> c.disconnect().get(2, TimeUnit.SECONDS));
    }

    @Override
    public String kind() {
        return "mqtt";
    }

    @Override
    public Map<String, String> target(Map<String, String> fields) throws AddressGuard.Refused {
        var u = checkedUri(fields);
        String topic = Fields.text(fields, "topic", 1, 1024, null);
        if (topic.contains("#") || topic.contains("+")) {
            throw new IllegalArgumentException("topic may not contain the wildcards # or +");
        }
        Map<String, String> target = new LinkedHashMap<>();
        target.put("uri", u.toString());
        target.put("topic", topic);
        return target;
    }

    @Override
    Mqtt3AsyncClient open(Endpoint e) throws Exception {
        Mqtt3ClientBuilder b = MqttClient.builder().useMqttVersion3()
                .identifier("waterline-" + UlidCreator.getMonotonicUlid().toString().toLowerCase(java.util.Locale.ROOT))
                .serverHost(e.address())
                .serverPort(e.port());
        if (e.secure(Set.of("mqtts", "ssl"))) {
            b = b.sslWithDefaultConfig();
        }
        if (e.user() != null) {
            var auth = Mqtt3SimpleAuth.builder().username(e.user());
            b = b.simpleAuth(e.password() == null ? auth.build() : auth.password(e.password().getBytes(StandardCharsets.UTF_8)).build());
        }
        Mqtt3AsyncClient client = b.buildAsync();
        try {
            client.connectWith().cleanSession(true).keepAlive(30).send()
                    .get(properties.connectTimeout().toMillis(), TimeUnit.MILLISECONDS);
            return client;
        }
        catch (Exception failed) {
            client.disconnect();
            throw failed instanceof ExecutionException ? new IllegalStateException(Outcome.describe(failed), failed) : failed;
        }
    }

    @Override
    Outcome publish(Mqtt3AsyncClient client, Call call) throws Exception {
        client.publishWith().topic(call.target().get("topic")).qos(MqttQos.AT_LEAST_ONCE)
                .payload(call.payload().getBytes(StandardCharsets.UTF_8)).send()
                .get(properties.callTimeout().toMillis(), TimeUnit.MILLISECONDS);
        return Outcome.DONE;
    }

    @Override
    boolean healthy(Mqtt3AsyncClient client) {
        return client.getState().isConnected();
    }
}
