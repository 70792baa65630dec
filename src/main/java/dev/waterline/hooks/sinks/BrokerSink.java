package dev.waterline.hooks.sinks;

import java.net.UnknownHostException;
import java.util.Map;
import java.util.concurrent.TimeoutException;

import dev.waterline.hooks.AddressGuard;
import dev.waterline.hooks.HookProperties;
import dev.waterline.hooks.Sink;

/**
 * What every broker sink reached by one URI does around its publish: the URI's host checked by the
 * guard (a refusal is permanent, a name that does not resolve is retried), the connection to the
 * checked address taken from the sink's own ({@link Connections}, opened on first use), and the
 * publish's failure turned into an outcome: a timeout or an error is retried, and a connection
 * that is no longer healthy afterwards is closed, so the next call opens a new one.
 */
abstract class BrokerSink<V> implements Sink {

    protected final AddressGuard guard;
    protected final HookProperties properties;
    private final String field;
    private final Map<String, Integer> schemes;
    private final Connections<V> connections;

    BrokerSink(String field, Map<String, Integer> schemes, AddressGuard guard, HookProperties properties, Connections.Closer<V> closer) {
        this.field = field;
        this.schemes = schemes;
        this.guard = guard;
        this.properties = properties;
        this.connections = new Connections<>(kind(), closer);
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
        V connection;
        try {
            connection = connections.get(key, k -> {
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
        catch (RuntimeException failed) {
            return Outcome.retry("could not connect: " + Outcome.describe(failed));
        }
        try {
            return publish(connection, call);
        }
        catch (TimeoutException timeout) {
            // a connection whose broker did not answer in time may be stuck: the next call opens another
            connections.discard(key, connection);
            return Outcome.retry("no confirmation from the broker within " + properties.callTimeout().toMillis() + " ms");
        }
        catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            return Outcome.retry("interrupted (the server is stopping)");
        }
        catch (Exception failed) {
            if (!healthy(connection)) {
                connections.discard(key, connection);
            }
            return failed(failed);
        }
    }

    @Override
    public void close() {
        connections.closeAll();
    }
}
