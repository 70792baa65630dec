/**
 * Durable history: {@code GET /api/chats/{id}/messages} paging by per-chat {@code seq} with a
 * fail-safe {@code since} cursor, and the retention loop that ages history out. Calls
 * {@code auth}, {@code web} and {@code lifecycle}.
 */
package dev.waterline.history;
