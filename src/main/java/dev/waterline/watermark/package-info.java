/**
 * The Redis index of live delivery ("Tetris"): per connected client, the sorted set of delivered
 * but unacked delivery ids; its count; the global sorted set of pins (each client's lowest
 * pending id) whose minimum will be the safe-delete line; and the acked marks the poller consumes
 * so it never re-delivers an acked row. All updates are the Lua scripts under
 * {@code resources/watermark/}, loaded once. Redis is an index, never the truth: everything here
 * can be rebuilt from the outbox. Calls {@code session}.
 */
package dev.waterline.watermark;
