/**
 * The Redis index of live delivery ("Tetris"): per connected client the sorted set of
 * delivered-but-unacked delivery ids (and of ids owed to it), its count, and the global sorted set
 * of pins (each client's lowest such id) whose minimum is the safe-delete line; the recording of
 * acks ({@code ack} frames, {@link dev.waterline.watermark.AckRecorder}); and whether the index can
 * be trusted to be whole ({@link dev.waterline.watermark.IndexHealth}). All index updates are the
 * Lua scripts under {@code resources/watermark/}, loaded once. Redis is an index, never the truth.
 * The index is a port ({@link dev.waterline.watermark.WatermarkIndex}: records, enums and
 * {@code Optional}s, no Redis type); {@code watermark.redis} is its one adapter, wired there, and
 * {@link dev.waterline.watermark.WatermarkKeys} names the keys it writes.
 * Calls {@code session}, {@code redis} (the key names it shares with presence), {@code lifecycle} and
 * {@code metrics}.
 */
package dev.waterline.watermark;
