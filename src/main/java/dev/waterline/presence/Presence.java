package dev.waterline.presence;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import dev.waterline.outbox.OutboxRow;

/**
 * Who is connected where, across the nodes that serve one deployment (PROTOCOL.md §8): for a user
 * not connected to this node, the node and connection (epoch) that hold it; and the hand-offs to
 * another node: a delivery, a frame, a close. A port: {@code presence.local} is the single-node
 * mode (nobody is ever connected elsewhere), {@code presence.redis} the cluster (Redis holds who is
 * where, node heartbeats, and one channel per node).
 *
 * <p>Which connection is a user's epoch is decided in Redis by the watermark index's scripts
 * (connect names the node with the session); presence reads that and carries messages between
 * nodes. Everything it carries is best effort: a lost delivery is the poller's to repeat, a lost
 * frame is a read receipt (best effort by contract), and a lost close leaves a connection whose
 * epoch is gone, which every delivery path refuses and the node then closes itself.
 */
public interface Presence {

    /** This node's id. */
    String nodeId();

    /** Whether other nodes may hold connections (the cluster mode). */
    boolean clustered();

    /**
     * Where each of {@code users} is connected on another live node: user → location. Users
     * connected nowhere else (here, or nowhere) are absent.
     */
    Map<String, Location> elsewhere(Collection<String> users);

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

    /** Sends one frame to a connection on another node. */
    void send(Location where, String frame);

    /** Nodes this node sees alive (itself included). */
    int liveNodes();

    /**
     * Declares dead every node whose heartbeat is older than {@code waterline.cluster.node-timeout},
     * and withdraws its connections from live delivery (never an ack); returns how many nodes.
     * The reclaim leader calls it every pass.
     */
    int sweepDeadNodes();

    /** The live nodes that do not say they trust their part of the index under {@code generation} (this node's own word included). */
    List<String> untrustedNodes(long generation);

    /** Where rows handed over by other nodes go on this one (the delivery capability registers it). */
    void onDeliveries(Deliveries deliveries);

    /** Receives rows another node handed to this one. */
    @FunctionalInterface
    interface Deliveries {
        void arrived(List<OutboxRow> rows, boolean poller);
    }
}
