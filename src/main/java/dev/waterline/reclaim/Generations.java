package dev.waterline.reclaim;

import java.util.OptionalLong;
import java.util.function.BooleanSupplier;

import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.presence.ClusterProperties;
import dev.waterline.presence.Presence;
import dev.waterline.watermark.MarkerStore;
import io.micrometer.core.instrument.Counter;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.stereotype.Component;

/**
 * The leader's watch over the index's generations (see {@link Reclaim}'s note). PostgreSQL holds
 * the marker token and the index's generation, and so does Redis. If Redis holds others (it lost
 * or rolled back data, or never had them), or a node was declared dead, or a node asked for it,
 * the leader starts a new generation: PostgreSQL first (fenced by the lease), then Redis, then it
 * forgets pins of users on no live node; every node then rebuilds its part ({@link IndexRebuild}).
 * Until every live node trusts the index under the current generation, and the generation has
 * stood for a trust's life, nothing is deleted; the leader's word to the pollers that every node
 * does ({@code wl:alltrusted}) is renewed here. Why a new generation is due is
 * {@link #whyNew}, pure.
 */
@Component
class Generations {

    private static final Log log = LogFactory.getLog(Generations.class);

    private final ReclaimProperties properties;
    private final IndexStores index;
    private final Presence presence;
    private final Leadership leadership;
    private final Counter generations;

    Generations(ReclaimProperties properties, IndexStores index, Presence presence, ClusterProperties cluster, Leadership leadership,
                WaterlineMetrics metrics) {
        if (cluster.enabled() && cluster.trustTtl().compareTo(properties.grace()) >= 0) {
            // a node's trust outlives its last renewal by trust-ttl: a row it wrote unrecorded
            // just before it lost trust must still be inside the grace when that trust runs out
            throw new IllegalArgumentException("three waterline.cluster.heartbeat-interval (" + cluster.trustTtl()
                    + ") must be shorter than waterline.reclaim.grace (" + properties.grace() + ")");
        }
        this.properties = properties;
        this.index = index;
        this.presence = presence;
        this.leadership = leadership;
        this.generations = metrics.counter("waterline.watermark.generations",
                "new generations of the index this node started as the reclaim leader (every node then rebuilds its part)");
    }

    /**
     * Why a new generation is due, or null: Redis holds another marker token or generation than
     * PostgreSQL ({@code heldToken} empty: none at all), {@code dead} nodes were declared dead, or a
     * node asked ({@code requested}, asked last: it costs a Redis call).
     */
    static String whyNew(OptionalLong heldToken, OptionalLong heldGeneration, MarkerStore.Marker marker, int dead, BooleanSupplier requested) {
        if (!heldToken.equals(OptionalLong.of(marker.token())) || !heldGeneration.equals(OptionalLong.of(marker.generation()))) {
            return heldToken.isEmpty() ? "Redis holds no marker" : "Redis holds marker " + heldToken.getAsLong() + " of generation "
                    + (heldGeneration.isEmpty() ? "none" : Long.toString(heldGeneration.getAsLong())) + ", PostgreSQL "
                    + marker.token() + " of " + marker.generation();
        }
        if (dead > 0) {
            return dead + " node(s) declared dead";
        }
        if (requested.getAsBoolean()) {
            return "a node suspects it missed a write";
        }
        return null;
    }

    /**
     * Redis holds a marker ahead of PostgreSQL's: the database was restored to an earlier point,
     * and its outbox hands out ids Redis's acked sets may already name.
     */
    static boolean redisAhead(OptionalLong heldToken, MarkerStore.Marker marker) {
        return heldToken.isPresent() && heldToken.getAsLong() > marker.token();
    }

    /** Redis's generation of the index (empty: none), read first in every pass. */
    OptionalLong held() {
        return index.redis().generation();
    }

    /**
     * The leader's first step: PostgreSQL's marker if it stands, or null when a new generation was
     * due (and started, if the lease still held).
     */
    MarkerStore.Marker standing(long epoch) {
        MarkerStore.Marker m = index.markers().read();
        OptionalLong heldToken = index.redis().marker();
        OptionalLong heldGeneration = index.redis().generation();
        int dead = presence.sweepDeadNodes();
        String why = whyNew(heldToken, heldGeneration, m, dead, index.redis()::newGenerationRequested);
        if (why == null) {
            return m;
        }
        if (redisAhead(heldToken, m)) {
            // Those acked sets are the one record whose stale entry would skip a row rather than
            // repeat it: gone before any node rebuilds under the new generation.
            long forgotten = index.redis().forgetAcked();
            log.warn("Redis holds marker " + heldToken + ", ahead of PostgreSQL's " + m.token()
                    + " (a database restored without flushing Redis?): " + forgotten + " acked sets dropped");
        }
        newGeneration(epoch, m, why);
        return null;
    }

    /** Starts a new generation of the index: PostgreSQL first (fenced), then Redis. */
    private void newGeneration(long epoch, MarkerStore.Marker m, String why) {
        MarkerStore.Marker next = new MarkerStore.Marker(m.token() + 1, m.generation() + 1);
        if (leadership.fenced(epoch, () -> {
            index.markers().write(next);
            return true;
        }).isEmpty()) {
            return;
        }
        index.redis().newGeneration(next.token(), next.generation());
        long orphans = presence.forgetOrphans();
        generations.increment();
        log.info("generation " + next.generation() + " of the watermark index (" + why + "): every node rebuilds its part"
                + (orphans > 0 ? "; " + orphans + " pinned users on no live node forgotten" : ""));
    }

    /**
     * This node trusts its part under {@code generation}, and (the cluster) so does every node in
     * {@code wl:nodes}, and the generation has stood for a trust's life ({@link Presence#othersTrust}).
     */
    boolean everyNodeTrusts(long generation) {
        if (index.health().trustedGeneration() != generation) {
            return false;
        }
        return presence.othersTrust(generation);
    }

    /** Withdraws the leader's word to the pollers (the cluster): not every node trusts the index. */
    void notAllTrusted() {
        presence.withdrawVouch();
    }

    /**
     * Renews the leader's word to the pollers that every node trusts the index (the cluster), for
     * three passes: a leader that stops renewing it (it died, or found a node untrusted and could
     * not say so) leaves the pollers without it soon after.
     */
    void vouch(long generation) {
        presence.vouch(generation, properties.interval().multipliedBy(3));
    }
}
