/**
 * The Redis index of live delivery ("Tetris") and the reclaim it drives: per connected client the
 * sorted set of delivered-but-unacked delivery ids, its count, and the global sorted set of pins
 * (each client's lowest pending id) whose minimum is the safe-delete line; the GC loop that
 * deletes the outbox prefix below that line; and the rebuild of the index from the outbox when
 * Redis cannot prove it still holds what it was told (the marker). All index updates are the Lua
 * scripts under {@code resources/watermark/}, loaded once. Redis is an index, never the truth.
 * Calls {@code outbox}, {@code session} and {@code metrics}.
 */
package dev.waterline.watermark;
