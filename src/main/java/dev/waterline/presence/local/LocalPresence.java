package dev.waterline.presence.local;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.outbox.OutboxRow;
import dev.waterline.presence.Location;
import dev.waterline.presence.Presence;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.stereotype.Component;

/**
 * The single-node mode: this process is the only node, so nobody is ever connected elsewhere and
 * nothing is handed over. The node id is fixed ({@value #NODE}), so that what a restarted process
 * finds in Redis under it is its own predecessor's, and the index rebuild drops it.
 */
@Component
@ConditionalOnProperty(name = "waterline.cluster.enabled", havingValue = "false", matchIfMissing = true)
class LocalPresence implements Presence {

    static final String NODE = "local";

    LocalPresence(WaterlineMetrics metrics) {
        metrics.gauge("waterline.cluster.nodes", "live nodes this node sees (itself included)", () -> 1);
    }

    @Override
    public String nodeId() {
        return NODE;
    }

    @Override
    public boolean clustered() {
        return false;
    }

    @Override
    public Map<String, Location> elsewhere(Collection<String> users) {
        return Map.of();
    }

    @Override
    public CompletableFuture<Boolean> close(Location where, int code, String reason) {
        return CompletableFuture.completedFuture(false);
    }

    @Override
    public void deliver(String node, List<OutboxRow> rows, boolean poller) {
        throw new IllegalStateException("no other node to deliver to in the single-node mode");
    }

    @Override
    public void send(Location where, String frame) {
        throw new IllegalStateException("no other node to send to in the single-node mode");
    }

    @Override
    public int liveNodes() {
        return 1;
    }

    @Override
    public int sweepDeadNodes() {
        return 0;
    }

    /** The one node's trust is its own {@code IndexHealth}, which reclaim reads itself. */
    @Override
    public List<String> untrustedNodes(long generation) {
        return List.of();
    }

    @Override
    public void onDeliveries(Deliveries deliveries) {
        // nothing ever arrives from another node
    }
}
