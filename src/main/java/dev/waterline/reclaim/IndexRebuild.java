package dev.waterline.reclaim;

import java.util.HashSet;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;

import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.outbox.OutboxStore;
import dev.waterline.presence.ClusterProperties;
import dev.waterline.presence.Presence;
import dev.waterline.session.ClientSession;
import dev.waterline.session.SessionRegistry;
import dev.waterline.watermark.MarkerStore;
import dev.waterline.watermark.WatermarkIndex;
import io.micrometer.core.instrument.Counter;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.stereotype.Component;

/**
 * Every node's part of a reclaim pass (see {@link Reclaim}'s note): keeps this node's part of the
 * index whole. When this node does not trust its part under the current generation: if it
 * suspects it missed a write since it last asked, it asks the leader for a new generation (what
 * it missed may concern any node's clients) and waits for it; otherwise it rebuilds its part from a
 * full scan of the outbox ({@link #rebuild}) and trusts it. What to do is {@link #next}, pure.
 */
@Component
class IndexRebuild {

    private static final Log log = LogFactory.getLog(IndexRebuild.class);

    /** What this node does for its part of the index in a pass. */
    enum Next {
        /** Nothing: the leader has yet to give Redis the generation, or this node trusts it already, or waits for a newer one. */
        NOTHING,
        /** Ask the leader for a new generation, and wait for it. */
        ASK,
        /** Rebuild this node's part under the current generation. */
        REBUILD
    }

    private final IndexStores index;
    private final OutboxStore outbox;
    private final SessionRegistry sessions;
    private final Presence presence;
    /** The deployment's mode, as the index's scripts take it ({@code waterline.cluster.enabled}). */
    private final boolean clustered;
    private final Counter rebuilds;
    /** This node asked for a new generation above this one, and waits for it before it rebuilds. */
    private long awaitingAbove = -1;

    IndexRebuild(IndexStores index, OutboxStore outbox, SessionRegistry sessions, Presence presence, ClusterProperties cluster,
                 WaterlineMetrics metrics) {
        this.index = index;
        this.outbox = outbox;
        this.sessions = sessions;
        this.presence = presence;
        this.clustered = cluster.enabled();
        this.rebuilds = metrics.counter("waterline.watermark.rebuilds", "rebuilds of this node's part of the Redis index from the outbox");
    }

    /**
     * What to do, given Redis's generation ({@code held}, empty: none), PostgreSQL's
     * ({@code generation}), the one this node trusts its part under, whether it wants a new one
     * ({@code wanted}) and the one above which it waits for a new one ({@code awaitingAbove}).
     */
    static Next next(OptionalLong held, long generation, long trusted, boolean wanted, long awaitingAbove) {
        if (held.isEmpty() || held.getAsLong() != generation || trusted == generation) {
            return Next.NOTHING;
        }
        if (wanted) {
            return Next.ASK;
        }
        return generation > awaitingAbove ? Next.REBUILD : Next.NOTHING;
    }

    /** This node's part of a pass. */
    void keep() {
        MarkerStore.Marker m = index.markers().read();
        OptionalLong held = index.redis().generation();
        long trusted = index.health().trustedGeneration();
        long seen = index.health().suspicions();
        switch (next(held, m.generation(), trusted, index.health().newGenerationWanted(), awaitingAbove)) {
            case NOTHING -> {
            }
            case ASK -> {
                index.redis().requestNewGeneration(presence.nodeId());
                index.health().asked(seen);
                awaitingAbove = m.generation();
            }
            case REBUILD -> rebuild(m.generation());
        }
    }

    /**
     * Rebuilds this node's part of the index from the outbox. Every connection here is given, as
     * owed, every row of its still in delivery but those its user acked whose retirement the
     * poller has not reached (Redis's acked set; where Redis lost that too, conservative: such a
     * row is written and acked again), and loses pending or owed ids the scan did not find; users that
     * hold a pin but have no connection here lose it (in the cluster: only those Redis places on
     * this node, and every user it places on this node). In the cluster a connection Redis no
     * longer names (another node's newer one superseded it: 4009; it was withdrawn, declared dead
     * or lost with Redis's data: 1012) is closed, never named again: its client reconnects and
     * resyncs. Only if Redis still holds {@code generation} at the end (no flush meanwhile) and no
     * suspicion arose meanwhile is this node's part trusted under it.
     */
    void rebuild(long generation) {
        WatermarkIndex watermark = index.redis();
        long seen = index.health().suspicions();
        String node = presence.nodeId();
        OutboxStore.InDelivery scan = outbox.inDelivery(user -> sessions.get(user) != null);
        Set<String> leftovers = new HashSet<>(watermark.pinnedUsers());
        if (clustered) {
            // and every user Redis places on this node, pinned or not: an epoch left without its
            // connection (a connect whose answer was lost) would take what is owed to it
            leftovers.addAll(watermark.nodeUsers(node));
        }
        for (String user : leftovers) {
            sessions.underUserLock(user, () -> {
                if (sessions.get(user) == null) {
                    watermark.forgetUser(user, clustered ? node : null);
                }
                return null;
            });
        }
        int connections = 0;
        int superseded = 0;
        for (ClientSession s : sessions.all()) {
            long[] ids = scan.byRecipient().getOrDefault(s.userId(), List.of()).stream().mapToLong(Long::longValue).toArray();
            WatermarkIndex.EpochClaim kept = sessions.underUserLock(s.userId(), () -> {
                if (!sessions.isCurrent(s)) {
                    return WatermarkIndex.EpochClaim.ALREADY_NAMED;
                }
                WatermarkIndex.EpochClaim r = watermark.rebuildUser(s, node, clustered, scan.highestId(), ids);
                if (r.closes()) {
                    sessions.unregister(s);
                }
                return r;
            });
            if (kept == WatermarkIndex.EpochClaim.SUPERSEDED) {
                superseded++;
                s.close(4009, "superseded by a newer connection on another node");
            }
            else if (kept == WatermarkIndex.EpochClaim.GONE) {
                superseded++;
                s.close(1012, "this connection left live delivery; reconnect and resync");
            }
            connections += kept == WatermarkIndex.EpochClaim.NAMED ? 1 : 0;
        }
        if (!watermark.generation().equals(OptionalLong.of(generation))) {
            log.warn("Redis lost generation " + generation + " of the index during the rebuild; rebuilding again on the next pass");
            return;
        }
        rebuilds.increment();
        boolean trusted = index.health().trust(generation, seen);
        log.info("this node's part of the watermark index rebuilt under generation " + generation + " for " + connections
                + " connections" + (superseded > 0 ? " (" + superseded + " no longer in live delivery, closed)" : "")
                + (trusted ? "" : "; a suspicion arose meanwhile, rebuilding again on the next pass"));
    }
}
