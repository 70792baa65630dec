package dev.waterline.hooks.sinks;

import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeoutException;

import dev.waterline.hooks.AddressGuard;
import dev.waterline.hooks.HookProperties;
import dev.waterline.hooks.Sink;
import dev.waterline.lifecycle.ThrottledLog;
import dev.waterline.metrics.WaterlineMetrics;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * What every broker sink reached by one URI does around its publish: the URI's host checked by the
 * guard (a refusal is permanent, a name that does not resolve is retried), the connection to the
 * checked address taken from the sink's own ({@link Connections}, opened on first use, at most
 * {@value #MOST_CONNECTIONS} a kind, those closing included (a call needing one more while every one
 * is in use is not made, and tried again soon), closed after {@code IDLE} unused or once their
 * hooks are deleted here),
 * and the publish's failure turned into an outcome: a timeout or an error is retried, and a
 * connection that is no longer healthy afterwards is closed, so the next call opens a new one.
 * No client reconnects on its own (each is opened with its reconnection off): a broker that cannot
 * be reached costs a connection attempt per call, and the call's retry backs off. A connection
 * that cannot be made is logged at most once a second per kind (every failure is in the delivery's
 * last error and in {@code waterline_hook_deliveries_total{outcome="retry"}}).
 */
abstract class BrokerSink<V> implements Sink {

    static final int MOST_CONNECTIONS = 256;
    static final Duration IDLE = Duration.ofMinutes(10);
    private static final Log log = LogFactory.getLog(BrokerSink.class);

    protected final AddressGuard guard;
    protected final HookProperties properties;
    private final String field;
    private final Map<String, Integer> schemes;
    private final Connections<V> connections;
    private final ThrottledLog unreachable = new ThrottledLog();

    BrokerSink(String field, Map<String, Integer> schemes, AddressGuard guard, HookProperties properties, WaterlineMetrics metrics,
               Connections.Closer<V> closer) {
        this.field = field;
        this.schemes = schemes;
        this.guard = guard;
        this.properties = properties;
        this.connections = new Connections<>(kind(), MOST_CONNECTIONS, IDLE, properties.callTimeout(), closer, metrics);
    }

    /** Opens a connection to the checked address of {@code e}; throws what failed. */
    abstract V open(Endpoint e) throws Exception;

    /** Publishes {@code call} and waits for the broker's confirmation, at most {@code call-timeout}. */
    abstract Outcome publish(V connection, Call call) throws Exception;

    /** Whether {@code connection} may serve the next call after one of its calls failed. */
    abstract boolean healthy(V connection);

    /** What a failed publish (not a timeout) is: retried, unless a sink knows better. */
    Outcome failed(Exception e) {
        return Outcome.retry(Outcome.describe(e));
    }

    /** The URI field's checks at creation: scheme, host, and the guard. */
    final java.net.URI checkedUri(Map<String, String> fields) throws AddressGuard.Refused {
        java.net.URI u = Endpoint.parse(field, fields.get(field), schemes, true);
        Fields.check(u.getHost(), guard);
        return u;
    }

    @Override
    public final Outcome deliver(Call call) {
        Endpoint e;
        try {
            e = Endpoint.resolve(field, call.target().get(field), schemes, true, guard);
        }
        catch (AddressGuard.Refused refused) {
            return new Outcome.Permanent(refused.getMessage());
        }
        catch (UnknownHostException | IllegalArgumentException unresolved) {
            return Outcome.retry(Outcome.describe(unresolved));
        }
        String key = e.pinnedAuthority() + " " + call.target().get(field);
        Connections<V>.Lease lease;
        try {
            lease = connections.lease(key, call.hookId(), k -> {
                try {
                    return open(e);
                }
                catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while connecting");
                }
                catch (RuntimeException failed) {
                    throw failed;
                }
                catch (Exception failed) {
                    throw new IllegalStateException(Outcome.describe(failed), failed);
                }
            });
        }
        catch (Connections.Full full) {
            return new Outcome.NotMade(full.getMessage());
        }
        catch (RuntimeException failed) {
            String why = Outcome.describe(failed);
            long held = unreachable.admit();
            if (held >= 0) {
                log.info(kind() + " hook: could not connect to " + e.pinnedAuthority() + ": " + why + ThrottledLog.more(held));
            }
            return Outcome.retry("could not connect: " + why);
        }
        try {
            return publish(lease.connection(), call);
        }
        catch (TimeoutException timeout) {
            // a connection whose broker did not answer in time may be stuck: the next call opens another
            lease.discard();
            return Outcome.retry("no confirmation from the broker within " + properties.callTimeout().toMillis() + " ms");
        }
        catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            return Outcome.retry("interrupted (the server is stopping)");
        }
        catch (Exception failed) {
            if (!healthy(lease.connection())) {
                lease.discard();
            }
            return failed(failed);
        }
        finally {
            lease.close();
        }
    }

    @Override
    public void forget(String hookId) {
        connections.forget(hookId);
    }

    @Override
    public void closeIdle() {
        connections.closeIdle();
    }

    @Override
    public void close() {
        connections.closeAll();
    }
}
