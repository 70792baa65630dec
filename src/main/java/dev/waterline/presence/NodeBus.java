package dev.waterline.presence;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import dev.waterline.outbox.OutboxRow;

/**
 * What one node hands to another: deliveries, frames, a close, a broadcast to all. A port: {@code presence.local}
 * is the single node (what is handed to a node arrives on this one; no other node is alive),
 * {@code presence.redis} the cluster (one Redis channel per node). Where a user is connected is
 * {@link Presence}'s to say; a caller hands over only to a {@link Location} it read there.
 *
 * <p>Everything it carries is best effort: a lost delivery is the poller's to repeat, a lost
 * frame is a read receipt (best effort by contract), and a lost close leaves a connection whose
 * epoch is gone, which every delivery path refuses and the node then closes itself.
 */
public interface NodeBus {

    /**
     * Asks the node holding {@code where} to close that connection with {@code code}. Completes
     * with true once that node reports it closed (or already gone), false when the node is not
     * alive or did not answer within {@code waterline.cluster.evict-timeout}.
     */
    CompletableFuture<Boolean> close(Location where, int code, String reason);

    /**
     * Hands rows to {@code node}, which holds their recipients, to be recorded and written there
     * ({@code poller}: re-sends the poller decided, counted as its deliveries).
     */
    void deliver(String node, List<OutboxRow> rows, boolean poller);

    /** Sends one frame to the connection {@code where} names, on its node. */
    void send(Location where, String frame);

    /**
     * Hands {@code message} to every live node, this one included (what presence announces to the
     * nodes that hold the connections it concerns). Best effort, like everything here.
     */
    void broadcast(String message);

    /** Where messages broadcast by any node go on this one (one receiver: presence registers it). */
    void onBroadcast(java.util.function.Consumer<String> receiver);

    /** Where rows handed over to this node go (the delivery capability registers it). */
    void onDeliveries(Deliveries deliveries);

    /** Receives rows handed to this node. */
    @FunctionalInterface
    interface Deliveries {
        void arrived(List<OutboxRow> rows, boolean poller);
    }
}
