/**
 * Read receipts: {@code read} frames are group-committed (64 per batch or 10 ms) into
 * {@code read_receipts}, a member's receipt only ever moving forward, then pushed best-effort to
 * the chat's other connected members. Calls {@code session}.
 */
package dev.waterline.receipts;
