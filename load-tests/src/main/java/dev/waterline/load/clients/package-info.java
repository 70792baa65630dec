/**
 * The simulated clients: {@code SimClient} follows PROTOCOL.md's client contract (ack promptly,
 * resync history {@code since=} on every reconnect, dedupe by messageId), or misbehaves as its
 * {@code Behaviour} says; its WebSocket is a {@code WsLink} (Netty by default, or the JDK's), its
 * frames read as {@code WireFrame}s; a stream reader keeps its place in a {@code SeqCursor}. Talks to
 * the server only over the wire contract.
 */
package dev.waterline.load.clients;
