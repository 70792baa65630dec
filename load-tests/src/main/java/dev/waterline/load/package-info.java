/**
 * The load generator and its reconciliation: simulated clients that follow PROTOCOL.md's client
 * contract (ack promptly, resync history {@code since=} on every reconnect, dedupe by messageId),
 * optional misbehaving fractions, a progress line per second, and at the end a message-by-message
 * reconciliation of everything accepted against history (G1) and against what each recipient
 * holds (G3). Talks to the server only over the wire contract.
 */
package dev.waterline.load;
