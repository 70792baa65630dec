/**
 * Read receipts: {@code read} frames (charged against the connection's rate, shared with sends)
 * are group-committed (64 per batch or 10 ms) into {@code read_receipts}, a member's receipt only
 * ever moving forward and a receipt that moves nothing neither stored nor pushed, then pushed
 * best-effort to the chat's other connected members. Calls {@code session}, {@code presence}, {@code lifecycle}
 * and {@code metrics}.
 */
package dev.waterline.receipts;
