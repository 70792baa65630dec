package dev.waterline.presence.local;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;

import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.presence.Location;
import dev.waterline.presence.Presence;
import dev.waterline.watermark.IndexHealth;
import dev.waterline.watermark.MarkerStore;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.stereotype.Component;

/**
 * The single-node mode: this process is the only node, so nobody is ever connected elsewhere,
 * there is no other node to sweep, vouch to or wait for. The node id is fixed ({@value #NODE}),
 * so that what a restarted process finds in Redis under it is its own predecessor's, and the
 * index rebuild drops it.
 */
@Component
@ConditionalOnProperty(name = "waterline.cluster.enabled", havingValue = "false", matchIfMissing = true)
class LocalPresence implements Presence {

    static final String NODE = "local";

    private final IndexHealth health;

    LocalPresence(IndexHealth health, WaterlineMetrics metrics) {
        this.health = health;
        metrics.gauge("waterline.cluster.nodes", "live nodes this node sees (itself included)", () -> 1);
    }

    @Override
    public String nodeId() {
        return NODE;
    }

    @Override
    public Map<String, Location> elsewhere(Collection<String> users) {
        return Map.of();
    }

    /** Nobody is elsewhere, and "nowhere" is this node's registry's word, which the poller has read. */
    @Override
    public Optional<Map<String, Location>> locateIfWhole(Collection<String> users, MarkerStore.Marker marker) {
        return Optional.of(Map.of());
    }

    @Override
    public boolean othersMayHold() {
        return false;   // the only node
    }

    @Override
    public int liveNodes() {
        return 1;
    }

    @Override
    public int sweepDeadNodes() {
        return 0;
    }

    @Override
    public long forgetOrphans() {
        return 0;
    }

    /** The one node's trust is its own {@code IndexHealth}, which reclaim reads itself. */
    @Override
    public boolean othersTrust(long generation) {
        return true;
    }

    @Override
    public void vouch(long generation, Duration ttl) {
        // no other node's poller to tell
    }

    @Override
    public void withdrawVouch() {
        // no other node's poller to tell
    }

    @Override
    public void leftUnrecorded() {
        health.suspect();
    }

    @Override
    public boolean registrationRequired() {
        return false;
    }
}
