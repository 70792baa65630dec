package dev.waterline.hooks.sinks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

import dev.waterline.hooks.AddressGuard;
import dev.waterline.hooks.HookProperties;
import dev.waterline.metrics.WaterlineMetrics;
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
 *
 * <p>Flushes are shared: a flush (a PING answered by PONG) covers every publish queued before it,
 * so concurrent deliveries on one connection take turns at one flush at a time, and a delivery
 * whose publish an earlier flush already covered waits for no other. (A flush per delivery put
 * many PINGs out at once, past the client's limit of outstanding pings, which closed the
 * connection: 92 deliveries a second, and a new connection for nearly every failure.)
 */
@Component
class NatsSink extends BrokerSink<NatsSink.Flushed> {

    /** A connection, and how far its publishes are known to have reached the server. */
    static final class Flushed {
        final Connection nc;
        final AtomicLong published = new AtomicLong();
        final ReentrantLock flushing = new ReentrantLock();
        volatile long flushed;

        Flushed(Connection nc) {
            this.nc = nc;
        }

        /**
         * Returns once publish number {@code mine} has reached the server, within {@code timeout}
         * in all (the wait for the lock included). jnats' flush can return without a PONG (too
         * many pings out, or the connection no longer connected: it then closes the connection
         * and returns normally), so a flush counts only if the client's flush counter rose and the
         * connection is still connected; otherwise the delivery is not done.
         */
        void flushUpTo(long mine, Duration timeout) throws TimeoutException, InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            if (!flushing.tryLock(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
                throw new TimeoutException("waiting for another delivery's flush");
            }
            try {
                if (flushed >= mine) {
                    return;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new TimeoutException("no time left for a flush");
                }
                long upTo = published.get();
                long before = nc.getStatistics().getFlushCounter();
                nc.flush(Duration.ofNanos(left));
                if (nc.getStatistics().getFlushCounter() <= before || nc.getStatus() != Connection.Status.CONNECTED) {
                    throw new IllegalStateException("the flush was not answered (the connection is closing)");
                }
                flushed = upTo;
            }
            finally {
                flushing.unlock();
            }
        }
    }

    static final Map<String, Integer> SCHEMES = Map.of("nats", 4222, "tls", 4222);

    NatsSink(AddressGuard guard, HookProperties properties, WaterlineMetrics metrics) {
        super("url", SCHEMES, guard, properties, metrics, f -> f.nc.close());
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
    Flushed open(Endpoint e) throws Exception {
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
        return new Flushed(Nats.connect(o.build()));
    }

    @Override
    Outcome publish(Flushed f, Call call) throws Exception {
        Connection nc = f.nc;
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
            f.flushUpTo(f.published.incrementAndGet(), properties.callTimeout());
        }
        return Outcome.DONE;
    }

    @Override
    boolean healthy(Flushed f) {
        return f.nc.getStatus() == Connection.Status.CONNECTED;
    }
}
