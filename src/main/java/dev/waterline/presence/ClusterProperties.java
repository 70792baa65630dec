package dev.waterline.presence;

import java.time.Duration;

import com.github.f4b6a3.ulid.UlidCreator;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code waterline.cluster.*} (PROTOCOL.md §8).
 *
 * @param enabled whether this node is one of many on one PostgreSQL and one Redis. Default false;
 *                on whenever both PostgreSQL and Redis are external (the zero-configuration mode
 *                stays a single node).
 * @param nodeId the start of this node's id (letters, digits, '.', '_', '-'), for the logs and
 *               metrics of an operator who names nodes; every start adds a ULID of its own, so a
 *               restarted node is always a new node (what its predecessor held is dropped when
 *               its heartbeats stop) and two processes can never share an id. Default: none (the
 *               id is the ULID alone).
 * @param nodeTimeout a node whose heartbeat is older than this is dead: its connections are
 *                    withdrawn (never acked) and the index rebuilt by every node. Default 10 s.
 * @param heartbeatInterval how often a node renews its heartbeat and its trust in the index.
 *                          Default 1 s; at most a third of {@code node-timeout}, and three of
 *                          them (how long a node's trust outlives its last renewal) less than
 *                          {@code waterline.reclaim.grace}.
 * @param evictTimeout how long a new connection waits for the node holding its user's older
 *                     connection to close it (4009) before it is welcomed anyway. Default 1 s.
 * @param routeQueueSize rows committed here for recipients connected to other nodes, waiting to be
 *                       handed over; past it they are handed over by the committing thread.
 *                       Default 8000.
 */
@ConfigurationProperties("waterline.cluster")
public record ClusterProperties(
        @DefaultValue("false") boolean enabled,
        String nodeId,
        @DefaultValue("10s") Duration nodeTimeout,
        @DefaultValue("1s") Duration heartbeatInterval,
        @DefaultValue("1s") Duration evictTimeout,
        @DefaultValue("8000") int routeQueueSize) {

    public ClusterProperties {
        if (nodeId != null && !nodeId.isBlank() && !nodeId.matches("[A-Za-z0-9._-]{1,64}")) {
            throw new IllegalArgumentException("waterline.cluster.node-id must be 1-64 letters, digits, '.', '_' or '-': " + nodeId);
        }
        String incarnation = UlidCreator.getMonotonicUlid().toString();
        nodeId = nodeId == null || nodeId.isBlank() ? incarnation : nodeId + "-" + incarnation;
        if (heartbeatInterval.multipliedBy(3).compareTo(nodeTimeout) > 0) {
            throw new IllegalArgumentException("waterline.cluster.heartbeat-interval (" + heartbeatInterval
                    + ") must be at most a third of waterline.cluster.node-timeout (" + nodeTimeout + ")");
        }
    }

    /** How long a node's trust in the index lives after its last renewal. */
    public Duration trustTtl() {
        return heartbeatInterval.multipliedBy(3);
    }
}
