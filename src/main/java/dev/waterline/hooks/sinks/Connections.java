package dev.waterline.hooks.sinks;

import java.time.Duration;
import java.util.function.Function;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The broker connections a sink keeps, one per checked address and target, opened on first use,
 * closed when idle for ten minutes, when more than 256 are open, when a call on them failed in a
 * way that may have broken them ({@link #discard}), and at shutdown.
 */
final class Connections<V> {

    private static final Log log = LogFactory.getLog(Connections.class);

    /** Closes one connection. */
    @FunctionalInterface
    interface Closer<V> {
        void close(V connection) throws Exception;
    }

    private final Cache<String, V> open;

    Connections(String kind, Closer<V> closer) {
        this.open = Caffeine.newBuilder().maximumSize(256).expireAfterAccess(Duration.ofMinutes(10))
                .<String, V>removalListener((key, connection, cause) -> {
                    if (connection != null) {
                        try {
                            closer.close(connection);
                        }
                        catch (Exception e) {
                            log.debug(kind + " hook connection did not close cleanly: " + e);
                        }
                    }
                }).build();
    }

    /** The connection for {@code key}, opened by {@code opener} if there is none (its failure is thrown). */
    V get(String key, Function<String, V> opener) {
        return open.get(key, opener);
    }

    /** Closes and forgets the connection of {@code key}, if it is still {@code connection}. */
    void discard(String key, V connection) {
        open.asMap().remove(key, connection);
    }

    void closeAll() {
        open.invalidateAll();
        open.cleanUp();
    }
}
