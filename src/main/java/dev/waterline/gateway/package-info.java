/**
 * The WebSocket edge ({@code /ws}): token check at the handshake, one active session per user
 * (the newer evicts the older with 4009 before registering), frame parsing and every error of
 * PROTOCOL.md §3, send credits and a per-connection rate limit, ping/pong, and closing every
 * socket with 1001 on shutdown. The only package that knows about WebSocket; it calls
 * {@code auth}, {@code ingest}, {@code receipts}, {@code watermark}, {@code session} and
 * {@code metrics}, and nothing calls it.
 */
package dev.waterline.gateway;
