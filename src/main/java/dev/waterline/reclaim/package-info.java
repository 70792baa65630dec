/**
 * Outbox GC ("Tetris"): the loop that deletes the outbox prefix below the safe-delete line (the
 * lowest pin over every connected client, from the watermark index), and the rebuild of the index
 * from the outbox whenever Redis cannot prove it still holds what it was told (the marker, kept in
 * PostgreSQL and Redis alike). Calls {@code outbox}, {@code watermark}, {@code presence}
 * (node liveness and trust), {@code history} (its retention settings: the outbox age
 * backstop), {@code session}, {@code lifecycle} and {@code metrics}.
 */
package dev.waterline.reclaim;
