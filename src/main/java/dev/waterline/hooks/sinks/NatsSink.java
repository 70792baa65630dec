package dev.waterline.hooks.sinks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import dev.waterline.hooks.AddressGuard;
import dev.waterline.hooks.HookProperties;
import io.nats.client.Connection;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.PublishOptions;
import io.nats.client.impl.Headers;
import org.springframework.stereotype.Component;

/**
 * {@code nats} hooks with jnats: with {@code "jetstream":"true"} a JetStream publish, done on the
 * stream's ack, with {@code Nats-Msg-Id} the delivery's key (the stream drops a retry within its
 * duplicate window); otherwise a core publish, done once a flush (a PING answered by PONG) shows
 * the server has read it. Headers {@code Waterline-Idempotency-Key} and {@code Waterline-Attempt}
 * travel with both.
 *
 * <p>One connection per checked address and URL; servers the cluster advertises are ignored (they
 * were never checked by the guard), and a broken connection is closed and opened again on the next
 * call rather than reconnected behind the guard's back.
 */
@Component
class NatsSink extends BrokerSink<Connection> {

    static final Map<String, Integer> SCHEMES = Map.of("nats", 4222, "tls", 4222);

    NatsSink(AddressGuard guard, HookProperties properties) {
        super("url", SCHEMES, guard, properties, Connection::close);
    }

    @Override
    public String kind() {
        return "nats";
    }

    @Override
    public Map<String, String> target(Map<String, String> fields) throws AddressGuard.Refused {
        var u = checkedUri(fields);
        String subject = Fields.text(fields, "subject", 1, 1024, null);
        if (subject.contains("*") || subject.contains(">") || subject.contains(" ")) {
            throw new IllegalArgumentException("subject may not contain wildcards (* or >) or spaces");
        }
        String jetstream = Fields.text(fields, "jetstream", 4, 5, "false");
        if (!jetstream.equals("true") && !jetstream.equals("false")) {
            throw new IllegalArgumentException("jetstream must be true or false");
        }
        Map<String, String> target = new LinkedHashMap<>();
        target.put("url", u.toString());
        target.put("subject", subject);
        target.put("jetstream", jetstream);
        return target;
    }

    @Override
    Connection open(Endpoint e) throws Exception {
        Options.Builder o = new Options.Builder()
                .server((e.secure(Set.of("tls")) ? "tls://" : "nats://") + e.pinnedAuthority())
                .connectionTimeout(properties.connectTimeout())
                .connectionName("waterline-hooks")
                .ignoreDiscoveredServers()
                .noReconnect()
                .pingInterval(Duration.ofSeconds(30));
        if (e.user() != null) {
            o.userInfo(e.user(), e.password() == null ? "" : e.password());
        }
        return Nats.connect(o.build());
    }

    @Override
    Outcome publish(Connection nc, Call call) throws Exception {
        Headers headers = new Headers()
                .add("Waterline-Idempotency-Key", call.idempotencyKey())
                .add("Waterline-Attempt", Integer.toString(call.attempt()));
        byte[] body = call.payload().getBytes(StandardCharsets.UTF_8);
        String subject = call.target().get("subject");
        if ("true".equals(call.target().get("jetstream"))) {
            nc.jetStream().publish(subject, headers, body,
                    PublishOptions.builder().messageId(call.idempotencyKey()).streamTimeout(properties.callTimeout()).build());
        }
        else {
            nc.publish(subject, headers, body);
            nc.flush(properties.callTimeout());
        }
        return Outcome.DONE;
    }

    @Override
    boolean healthy(Connection nc) {
        return nc.getStatus() == Connection.Status.CONNECTED;
    }
}
