package dev.waterline.gateway;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;

import dev.waterline.lifecycle.Failures;
import dev.waterline.lifecycle.ThrottledLog;
import dev.waterline.presence.Location;
import dev.waterline.presence.NodeBus;
import dev.waterline.presence.Presence;
import dev.waterline.session.ClientSession;
import dev.waterline.session.SessionRegistry;
import dev.waterline.watermark.IndexHealth;
import dev.waterline.watermark.WatermarkIndex;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;
import org.springframework.web.socket.CloseStatus;

/**
 * Whether a new connection is let in, and what it takes over: one live session per user. Under
 * the user's lock ({@link SessionRegistry#underUserLock}) the connection is registered and made
 * its user's epoch in the watermark index ({@code connect.lua}): registry and Redis change
 * together, so that two connections of one user racing here can never leave Redis naming the
 * evicted one while the registry names the survivor. The connection it evicts here is closed with
 * 4009; one Redis names on another node is closed there ({@link #closeElsewhere}) before this one
 * is welcomed. A server that is stopping refuses (1001); in the cluster, a connect Redis could not
 * register is refused (1011): across nodes Redis is where one session per user is decided.
 * Failures of the index are counted ({@code waterline.gateway.index.failures{at}}) and logged,
 * throttled (a Redis outage fails every connect and disconnect).
 */
@Component
class Admission {

    private static final Log log = LogFactory.getLog(Admission.class);
    static final String SUPERSEDED = "superseded by a newer connection";

    /** The outcome of {@link #admit}: welcome the connection, or close it as told. */
    sealed interface Result permits Admitted, Refused {
    }

    /** Registered, the user's earlier connections closed: welcome it. */
    record Admitted() implements Result {
    }

    /** Not let in: close it with {@code code} and {@code reason}. */
    record Refused(int code, String reason) implements Result {
    }

    static final Refused SHUTTING_DOWN = new Refused(CloseStatus.GOING_AWAY.getCode(), "server shutting down");
    static final Refused UNREGISTERED = new Refused(CloseStatus.SERVER_ERROR.getCode(),
            "the server could not register this connection; reconnect");

    /** The two calls admission makes of the watermark index (named here so that a unit test can stand in for Redis). */
    interface Epochs {
        Optional<WatermarkIndex.SessionLocation> connect(ClientSession s, String node);

        void disconnect(ClientSession s);
    }

    /**
     * What admission asks of presence and the node bus: this node, whether a connection Redis
     * could not register must be refused, what a connection leaving unrecorded means, and a close
     * on another node.
     */
    interface Nodes {
        String nodeId();

        boolean registrationRequired();

        void leftUnrecorded();

        CompletableFuture<Boolean> close(Location where, int code, String reason);
    }

    private final SessionRegistry sessions;
    private final Epochs watermark;
    private final IndexHealth health;
    private final Nodes presence;
    private final GatewayMetrics metrics;
    private final ThrottledLog connectFailureLog = new ThrottledLog();
    private final ThrottledLog disconnectFailureLog = new ThrottledLog();

    @Autowired
    Admission(SessionRegistry sessions, WatermarkIndex watermark, IndexHealth health, Presence presence, NodeBus bus,
              GatewayMetrics metrics) {
        this(sessions, new Epochs() {
            @Override
            public Optional<WatermarkIndex.SessionLocation> connect(ClientSession s, String node) {
                return watermark.connect(s, node);
            }

            @Override
            public void disconnect(ClientSession s) {
                watermark.disconnect(s);
            }
        }, health, new Nodes() {
            @Override
            public String nodeId() {
                return presence.nodeId();
            }

            @Override
            public boolean registrationRequired() {
                return presence.registrationRequired();
            }

            @Override
            public void leftUnrecorded() {
                presence.leftUnrecorded();
            }

            @Override
            public CompletableFuture<Boolean> close(Location where, int code, String reason) {
                return bus.close(where, code, reason);
            }
        }, metrics);
    }

    Admission(SessionRegistry sessions, Epochs watermark, IndexHealth health, Nodes presence, GatewayMetrics metrics) {
        this.sessions = sessions;
        this.watermark = watermark;
        this.health = health;
        this.presence = presence;
        this.metrics = metrics;
    }

    /**
     * Lets {@code conn} in, or refuses it ({@link Refused}: the caller closes it). {@code stopping}
     * is read before anything is done and again under the lock: stop() sets it before it looks at
     * the registry, so a connection registered after that is seen here instead, and leaves again.
     */
    Result admit(ClientSession conn, BooleanSupplier stopping) {
        if (stopping.getAsBoolean()) {
            return SHUTTING_DOWN;
        }
        String userId = conn.userId();
        String node = presence.nodeId();
        Result[] outcome = {new Admitted()};
        WatermarkIndex.SessionLocation[] elsewhere = {null};
        // Registry and Redis epoch change together: two connections of one user racing here must
        // not leave Redis naming the evicted one while the registry names the survivor.
        ClientSession evicted = sessions.underUserLock(userId, () -> {
            ClientSession previous = sessions.register(conn);
            try {
                watermark.connect(conn, node).filter(p -> !p.node().equals(node)).ifPresent(p -> elsewhere[0] = p);
            }
            catch (RuntimeException e) {
                metrics.indexFailuresAtConnect().increment();
                if (presence.registrationRequired()) {
                    // Across nodes Redis is where one session per user is decided: without it
                    // this connection could live beside the user's connection on another node.
                    warnAtConnect("could not register " + userId + "'s connection in Redis; closing it (1011): "
                            + Failures.describe(e));
                    sessions.unregister(conn);
                    // the script may have run and only its answer been lost: an epoch without its
                    // connection, which the rebuild this suspicion brings removes
                    health.suspect();
                    outcome[0] = UNREGISTERED;
                    return previous;
                }
                warnAtConnect("watermark index unavailable at connect of " + userId + " (delivery re-asserts it later): "
                        + Failures.describe(e));
                health.suspect();
            }
            if (stopping.getAsBoolean()) {
                sessions.unregister(conn);
                health.suspect();   // Redis may name this connection now: rebuild before reclaiming
                outcome[0] = SHUTTING_DOWN;
            }
            return previous;
        });
        if (outcome[0] instanceof Refused refused) {
            if (evicted != null) {
                evicted.close(refused.code(), refused.reason());
            }
            return refused;
        }
        if (evicted != null) {
            evicted.closeNow(4009, SUPERSEDED);
        }
        if (elsewhere[0] != null) {
            closeElsewhere(new Location(userId, elsewhere[0].node(), elsewhere[0].sessionId()));
        }
        return outcome[0];
    }

    /**
     * The user's older connection is on another node: it is closed there (4009) before this one
     * is welcomed, or evict-timeout passes (a node that does not answer: its connection is no
     * longer the epoch, and every delivery path refuses it).
     */
    void closeElsewhere(Location older) {
        try {
            presence.close(older, 4009, SUPERSEDED).join();
        }
        catch (RuntimeException e) {
            log.warn("could not ask node " + older.node() + " to close " + older.userId() + "'s older connection: "
                    + Failures.describe(e));
        }
    }

    /**
     * {@code conn} closed: it leaves the registry and, unless the server is stopping, the watermark
     * index. Stopping, there is no Redis call per connection (with Redis slow, thousands would hold
     * the stop for minutes): the index is distrusted instead, so the next start (or resume)
     * rebuilds it before anything is reclaimed; in the cluster this node's users leave live
     * delivery in one sweep as the node leaves (presence), and the other nodes need rebuild nothing.
     */
    void leave(ClientSession conn, BooleanSupplier stopping) {
        sessions.underUserLock(conn.userId(), () -> {
            if (sessions.unregister(conn)) {
                if (stopping.getAsBoolean()) {
                    presence.leftUnrecorded();
                    return null;
                }
                try {
                    watermark.disconnect(conn);
                }
                catch (RuntimeException e) {
                    metrics.indexFailuresAtDisconnect().increment();
                    long unlogged = disconnectFailureLog.admit();
                    if (unlogged >= 0) {
                        log.warn("watermark index unavailable at disconnect of " + conn.userId()
                                + " (the next index rebuild drops it): " + e.getMessage() + ThrottledLog.more(unlogged));
                    }
                    health.suspect();
                }
            }
            return null;
        });
    }

    private void warnAtConnect(String message) {
        long unlogged = connectFailureLog.admit();
        if (unlogged >= 0) {
            log.warn(message + ThrottledLog.more(unlogged));
        }
    }
}
