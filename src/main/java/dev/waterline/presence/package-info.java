/**
 * Who is connected where across the nodes of one deployment, and what the nodes hand to each
 * other; two ports, as a location service is apart from a message bus:
 * {@link dev.waterline.presence.Presence} (a user's node and connection epoch, node liveness and
 * trust in the index; the one place a user's location is read) and
 * {@link dev.waterline.presence.NodeBus} (deliveries, frames, a close on another node).
 * {@code presence.local} is the single-node mode (nobody is elsewhere; what is handed to a node
 * arrives here); {@code presence.redis} the cluster (who is where, as the watermark index's
 * scripts record it; node heartbeats; one channel per node). Calls {@code outbox} (the row
 * type), {@code commit} (the message a row carries), {@code watermark}, {@code redis} (the key names it shares with the index),
 * {@code session}, {@code lifecycle} and {@code metrics}.
 */
package dev.waterline.presence;
