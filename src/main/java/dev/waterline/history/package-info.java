/**
 * Durable history: {@code GET /api/chats/{id}/messages} paging by per-chat {@code seq} with a
 * fail-safe {@code since} cursor, each text message shown in its current state (its last edit,
 * deleted or not, its reactions and files, read for a whole page in one more round trip), one entry
 * by id, and the retention loop that ages history out. Calls {@code auth}, {@code web}, {@code sql}
 * and {@code lifecycle}.
 */
package dev.waterline.history;
