package dev.waterline.presence;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;

import dev.waterline.watermark.MarkerStore;

/**
 * Who is where, across the nodes that serve one deployment (PROTOCOL.md §8): for a user not
 * connected to this node, the node and connection (epoch) that hold it; which nodes are alive;
 * and whether they all trust the watermark index. A port: {@code presence.local} is the
 * single-node mode (nobody is ever connected elsewhere, and this node is the only one),
 * {@code presence.redis} the cluster (Redis holds who is where and the nodes' heartbeats). What
 * travels between nodes is the other port, {@link NodeBus}.
 *
 * <p><b>A user's location is read here only</b>: {@link #elsewhere} for the paths that hand
 * something over at once (best effort), {@link #locateIfWhole} for the poller, which concludes
 * from a user's absence. Which connection is a user's epoch is decided in Redis by the watermark
 * index's scripts (connect names the node with the session); this port reads that.
 */
public interface Presence {

    /** This node's id. */
    String nodeId();

    /**
     * Where each of {@code users} is connected on another node: user → location. Users connected
     * nowhere else (here, or nowhere) are absent.
     */
    Map<String, Location> elsewhere(Collection<String> users);

    /**
     * Where each of {@code users} has its epoch, this node included, only while the index is known
     * to be whole under PostgreSQL's {@code marker} (and, in the cluster, the leader's word that
     * every node trusts it): empty otherwise. A user absent from the answer is connected nowhere
     * else; one placed on this node that holds no connection here is a ghost epoch.
     */
    Optional<Map<String, Location>> locateIfWhole(Collection<String> users, MarkerStore.Marker marker);

    /**
     * Whether a user not connected to this node may be connected to another: false where this
     * node is the only one (the single-node adapter), true in the cluster whatever the node count
     * (a node may join at any time). A saving, not a decision: the paths that hand something to
     * other nodes ask it before they collect rows or frames for {@link #elsewhere}, which would
     * find nobody; a caller that skipped the question would be just as correct, only slower.
     */
    boolean othersMayHold();

    /** Nodes this node sees alive (itself included). */
    int liveNodes();

    /**
     * Declares dead every node whose heartbeat is older than {@code waterline.cluster.node-timeout},
     * and withdraws its connections from live delivery (never an ack); returns how many nodes.
     * The reclaim leader calls it every pass.
     */
    int sweepDeadNodes();

    /**
     * After the reclaim leader started a new generation: forgets every pinned user whose epoch is
     * on no live node; returns how many (one node: none, its own part is rebuilt).
     */
    long forgetOrphans();

    /**
     * Whether every other live node trusts its part of the index under {@code generation} and the
     * generation has stood for a trust's life (three heartbeats: after a Redis that lost its data
     * the nodes are missing until they beat again, and one that has not rejoined yet must not be
     * taken for one that is not there). One node: true, its own trust being the reclaim leader's
     * own check. The reclaim leader asks it every pass.
     */
    boolean othersTrust(long generation);

    /**
     * The reclaim leader's word to every node's poller that every node trusts the index under
     * {@code generation}, for {@code ttl}: a leader that stops renewing it leaves the pollers
     * without it soon after. One node: nothing to say, its poller reads its own trust.
     */
    void vouch(long generation, Duration ttl);

    /** Withdraws the word of {@link #vouch}: not every node trusts the index. */
    void withdrawVouch();

    /**
     * A connection of this node left without its disconnect recorded in Redis (the node is
     * stopping): one node distrusts the index, so that the next start rebuilds it before anything
     * is reclaimed; in the cluster the node's departure withdraws all its users in one sweep.
     */
    void leftUnrecorded();

    /**
     * Whether a connection Redis could not register must be refused (closed 1011). In the cluster
     * Redis is where one session per user is decided: such a connection could live beside the
     * user's connection on another node. One node decides it in its own registry: the connection
     * is served, and the index distrusted until rebuilt.
     */
    boolean registrationRequired();
}
