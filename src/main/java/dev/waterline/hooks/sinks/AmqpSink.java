package dev.waterline.hooks.sinks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.waterline.hooks.AddressGuard;
import dev.waterline.hooks.HookProperties;
import dev.waterline.metrics.WaterlineMetrics;
import org.springframework.stereotype.Component;

/**
 * {@code amqp} hooks with RabbitMQ's Java client: a persistent message (delivery mode 2,
 * {@code message-id} and header {@code Waterline-Idempotency-Key} the delivery's key, header
 * {@code Waterline-Attempt}) published {@code mandatory} on a channel in confirm mode; done on the
 * broker's confirm. A nack, a timeout, or a message the exchange could route nowhere (returned
 * before its confirm) is retried: a queue may be bound later.
 *
 * <p>One connection per checked address and URI (credentials and vhost from the URI), with a few
 * confirm channels reused one call at a time (a channel is not for two threads).
 */
@Component
class AmqpSink extends BrokerSink<AmqpSink.Pooled> {

    static final Map<String, Integer> SCHEMES = Map.of("amqp", 5672, "amqps", 5671);
    private static final int CHANNELS_PER_CONNECTION = 16;

    /** A confirm channel, and what the broker returned for its current publish. */
    static final class ConfirmChannel {
        final Channel channel;
        volatile String returned;

        ConfirmChannel(Channel channel) throws IOException {
            this.channel = channel;
            channel.confirmSelect();
            channel.addReturnListener(r -> returned = r.getReplyCode() + " " + r.getReplyText());
        }
    }

    record Pooled(Connection connection, BlockingQueue<ConfirmChannel> channels) {
    }

    AmqpSink(AddressGuard guard, HookProperties properties, WaterlineMetrics metrics) {
        super("uri", SCHEMES, guard, properties, metrics, p -> p.connection().close(2_000));
    }

    @Override
    public String kind() {
        return "amqp";
    }

    @Override
    public Map<String, String> target(Map<String, String> fields) throws AddressGuard.Refused {
        var u = checkedUri(fields);
        Map<String, String> target = new LinkedHashMap<>();
        target.put("uri", u.toString());
        target.put("exchange", Fields.text(fields, "exchange", 0, 255, ""));
        target.put("routingKey", Fields.text(fields, "routingKey", 0, 255, ""));
        return target;
    }

    @Override
    Pooled open(Endpoint e) throws Exception {
        ConnectionFactory f = new ConnectionFactory();
        f.setUri(e.uri());
        f.setHost(e.address().getHostAddress());
        f.setPort(e.port());
        f.setConnectionTimeout((int) properties.connectTimeout().toMillis());
        f.setHandshakeTimeout((int) properties.connectTimeout().toMillis());
        f.setAutomaticRecoveryEnabled(false);
        return new Pooled(f.newConnection("waterline-hooks"), new ArrayBlockingQueue<>(CHANNELS_PER_CONNECTION));
    }

    @Override
    Outcome publish(Pooled pooled, Call call) throws Exception {
        ConfirmChannel ch = pooled.channels().poll();
        if (ch == null || !ch.channel.isOpen()) {
            ch = new ConfirmChannel(pooled.connection().createChannel());
        }
        boolean reusable = false;
        try {
            ch.returned = null;
            AMQP.BasicProperties props = new AMQP.BasicProperties.Builder()
                    .contentType("application/json")
                    .deliveryMode(2)
                    .messageId(call.idempotencyKey())
                    .headers(Map.of("Waterline-Idempotency-Key", call.idempotencyKey(), "Waterline-Attempt", call.attempt()))
                    .build();
            ch.channel.basicPublish(call.target().get("exchange"), call.target().get("routingKey"), true, props,
                    call.payload().getBytes(StandardCharsets.UTF_8));
            // throws on a nack or past the timeout (and closes the channel)
            ch.channel.waitForConfirmsOrDie(properties.callTimeout().toMillis());
            reusable = true;
            String returned = ch.returned;
            return returned == null ? Outcome.DONE : Outcome.retry("unroutable: " + returned);
        }
        finally {
            if (reusable && pooled.channels().offer(ch)) {
                ch = null;
            }
            if (ch != null && ch.channel.isOpen()) {
                ch.channel.abort();
            }
        }
    }

    @Override
    boolean healthy(Pooled pooled) {
        return pooled.connection().isOpen();
    }
}
