package dev.waterline.delivery;

import java.time.Duration;
import java.util.List;

import dev.waterline.outbox.OutboxRow;
import dev.waterline.outbox.OutboxStore;
import dev.waterline.presence.ClusterProperties;
import dev.waterline.reclaim.ReclaimProperties;
import dev.waterline.watermark.MarkerStore;
import org.springframework.boot.data.redis.autoconfigure.DataRedisProperties;
import org.springframework.stereotype.Component;

/**
 * The poller's claim: up to so many due rows, oldest first from the reclaim floor, with
 * {@code FOR UPDATE SKIP LOCKED} and a lease (each claim counts an attempt), and PostgreSQL's
 * marker read just after, against which the index's word on those rows is checked.
 */
@Component
class ClaimDue {

    /** Rows claimed, and the marker read after the claim (null when nothing was claimed). */
    record Claimed(List<OutboxRow> rows, MarkerStore.Marker marker) {
    }

    /**
     * The Redis client's (Lettuce's) command timeout when {@code spring.data.redis.timeout} is
     * unset: its {@code RedisURI.DEFAULT_TIMEOUT_DURATION}, named here so that Lettuce stays in the
     * Redis adapters; {@code ClaimDueUnitTests} fails if the client's default moves.
     */
    static final Duration REDIS_CLIENT_DEFAULT_TIMEOUT = Duration.ofSeconds(60);

    private final Duration lease;
    private final OutboxStore outbox;
    private final MarkerStore markers;

    ClaimDue(DeliveryProperties properties, OutboxStore outbox, MarkerStore markers, ClusterProperties cluster,
             ReclaimProperties reclaim, DataRedisProperties redis) {
        Duration redisTimeout = redis.getTimeout() != null ? redis.getTimeout() : REDIS_CLIENT_DEFAULT_TIMEOUT;
        // A write that failed is known for one Redis command timeout later; the node then stops
        // vouching for the index within its trust's life (three heartbeats), and the leader's word
        // to the pollers lives three reclaim passes after its last renewal, which may come a pass
        // late: a row written unrecorded must not fall due for a poller before all that has run out.
        Duration window = redisTimeout.plus(cluster.trustTtl()).plus(reclaim.interval().multipliedBy(4));
        if (cluster.enabled() && properties.lease().compareTo(window) <= 0) {
            throw new IllegalArgumentException("waterline.delivery.lease (" + properties.lease() + ") must be longer than"
                    + " spring.data.redis.timeout, three waterline.cluster.heartbeat-interval and four waterline.reclaim.interval"
                    + " together (" + window + ")");
        }
        this.lease = properties.lease();
        this.outbox = outbox;
        this.markers = markers;
    }

    Claimed claim(int max) {
        List<OutboxRow> rows = outbox.claimDue(max, lease);
        if (rows.isEmpty()) {
            return new Claimed(rows, null);
        }
        // PostgreSQL's marker, read now: a Redis that lost or rolled back data since no longer
        // holds it, and then no row's absence from the index proves anything (status.lua)
        return new Claimed(rows, markers.read());
    }
}
