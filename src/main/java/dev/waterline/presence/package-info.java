/**
 * Who is connected where across the nodes of one deployment: the
 * {@link dev.waterline.presence.Presence} port (a user's node and connection epoch, node liveness,
 * and the hand-offs to another node: deliveries, frames, a close). {@code presence.local} is the
 * single-node mode; {@code presence.redis} the cluster (who is where, as the watermark index's
 * scripts record it; node heartbeats; one channel per node). Calls {@code outbox} (the row
 * type), {@code watermark}, {@code session}, {@code lifecycle} and {@code metrics}.
 */
package dev.waterline.presence;
