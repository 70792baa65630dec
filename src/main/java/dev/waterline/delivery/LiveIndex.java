package dev.waterline.delivery;

import java.util.List;

import dev.waterline.presence.ClusterProperties;
import dev.waterline.presence.Presence;
import dev.waterline.session.ClientSession;
import dev.waterline.session.SessionRegistry;
import dev.waterline.watermark.IndexHealth;
import dev.waterline.watermark.MarkerStore;
import dev.waterline.watermark.WatermarkIndex;
import org.springframework.stereotype.Component;

/**
 * The delivery paths' access to the watermark index. It also heals the one way the index and the
 * registry can disagree: Redis not naming a connection the registry holds as current. In the
 * single-node mode only Redis can be wrong (it was down when the connection opened, or lost its
 * data since): the connection's epoch is re-asserted under its user's lock (keeping whatever was
 * recorded for it meanwhile), the delivery recorded again, and the index distrusted until it has
 * been rebuilt. In the cluster Redis may be right (another node's newer connection holds the
 * user, or a poller elsewhere withdrew it and the close was lost, or this node was declared
 * dead), and it cannot tell those from a loss of its data: the connection is closed (4009 when
 * another connection holds the user, 1012 otherwise), never re-asserted, and its client
 * reconnects and resyncs.
 *
 * <p>The index's scripts take the deployment's mode as an argument (whether a node's own trust
 * is enough, whether an epoch Redis lost may be named again): it is {@code waterline.cluster.enabled},
 * read once from {@link ClusterProperties}. Where a user is connected is read through
 * {@link Presence} only.
 */
@Component
class LiveIndex {

    private final WatermarkIndex watermark;
    private final SessionRegistry sessions;
    private final IndexHealth health;
    private final Presence presence;
    /** The deployment's mode, as the index's scripts take it. */
    private final boolean cluster;

    LiveIndex(WatermarkIndex watermark, SessionRegistry sessions, IndexHealth health, Presence presence, ClusterProperties cluster) {
        this.watermark = watermark;
        this.sessions = sessions;
        this.health = health;
        this.presence = presence;
        this.cluster = cluster.enabled();
    }

    /** Records ids as written to {@code to}; false when {@code to} is no longer current (nothing recorded). */
    boolean deliver(ClientSession to, long[] ids) {
        return watermark.deliver(to, ids) >= 0 || reasserted(to) && watermark.deliver(to, ids) >= 0;
    }

    /**
     * {@link #deliver(ClientSession, long[])} for a whole batch in one script call; per group, in
     * order, whether its frames may be written. Only a group whose connection Redis no longer
     * names takes a second, single call after the re-assert. A failure of the batched call itself
     * is thrown (the caller writes the batch unrecorded).
     */
    boolean[] deliver(List<WatermarkIndex.Group> groups) {
        long[] pending = watermark.deliver(groups);
        boolean[] ok = new boolean[pending.length];
        for (int i = 0; i < ok.length; i++) {
            WatermarkIndex.Group g = groups.get(i);
            try {
                ok[i] = pending[i] >= 0 || reasserted(g.session()) && watermark.deliver(g.session(), g.ids()) >= 0;
            }
            catch (RuntimeException redisDown) {
                // As a single call failing did: this recipient's frames go out unrecorded, and
                // the index is distrusted until rebuilt. The other groups keep their verdicts.
                health.suspect();
                ok[i] = true;
            }
        }
        return ok;
    }

    /** Records ids as owed to {@code to}; false when {@code to} is no longer current (nothing recorded). */
    boolean owe(ClientSession to, long[] ids) {
        return watermark.owe(to, ids) || reasserted(to) && watermark.owe(to, ids);
    }

    /**
     * A connection of this node that Redis no longer names as its user's epoch: in the cluster it
     * is closed (4009 or 1012, see {@link #reasserted}), so that its rows are judged for the
     * connection Redis does name at their next claim; in the single-node mode it is named again.
     */
    void notTheEpoch(ClientSession to) {
        reasserted(to);
    }

    /** Records rows as owed to connections on other nodes, one call: per group 1, or -1 where the connection is no longer the epoch. */
    long[] oweAll(List<WatermarkIndex.Group> groups) {
        return watermark.owe(groups);
    }

    private boolean reasserted(ClientSession to) {
        if (!sessions.isCurrent(to)) {
            return false;
        }
        WatermarkIndex.EpochClaim r = sessions.underUserLock(to.userId(), () -> {
            if (!sessions.isCurrent(to)) {
                return WatermarkIndex.EpochClaim.ALREADY_NAMED;
            }
            WatermarkIndex.EpochClaim named = watermark.reassert(to, presence.nodeId(), cluster);
            if (named == WatermarkIndex.EpochClaim.NAMED) {
                // Redis had lost this epoch, so it may have lost more: rebuild before trusting it.
                health.suspect();
            }
            else if (named.closes()) {
                sessions.unregister(to);
            }
            return named;
        });
        if (r == WatermarkIndex.EpochClaim.SUPERSEDED) {
            to.close(4009, "superseded by a newer connection on another node");
            return false;
        }
        if (r == WatermarkIndex.EpochClaim.GONE) {
            to.close(1012, "this connection left live delivery; reconnect and resync");
            return false;
        }
        return sessions.isCurrent(to);
    }

    /**
     * Per id its status for the connection {@code sessionId} of {@code user} (see
     * {@link WatermarkIndex#status}), under PostgreSQL's {@code marker}; or null when the index is
     * not known to be whole right now ({@link WatermarkIndex.Statuses.Unknown}: this node does
     * not trust its part under the marker's generation, for a connection of its own; or, in the
     * cluster, the leader has not lately found every node trusting it): then nothing may be
     * concluded from a row's absence. {@link WatermarkIndex.Statuses.NotTheEpoch} when Redis does
     * not name that connection as its user's epoch.
     */
    WatermarkIndex.Statuses status(String user, String sessionId, boolean here, MarkerStore.Marker marker, long[] ids) {
        if (here && health.trustedGeneration() != marker.generation()) {
            return new WatermarkIndex.Statuses.Unknown();
        }
        if (!cluster && health.trustedGeneration() != marker.generation()) {
            return new WatermarkIndex.Statuses.Unknown();
        }
        return watermark.status(user, sessionId, marker.token(), marker.generation(), cluster, ids);
    }

    /**
     * A user Redis places on this node holds no connection here (a connect whose answer was lost,
     * a connection registered as this node was declared dead): its epoch is removed, under the
     * user's lock, so that nothing owed to it holds the line. Never an ack: history has it all.
     */
    void forgetGhost(String user) {
        sessions.underUserLock(user, () -> {
            if (sessions.get(user) == null) {
                watermark.forgetUser(user, presence.nodeId());
            }
            return null;
        });
    }

    /** Something may have gone unrecorded in Redis. */
    void suspect() {
        health.suspect();
    }
}
