/**
 * Durable streams (PROTOCOL.md §6): a producer's chunks, group-committed under its stream row's
 * lock into a time-partitioned table, read live through one shared tail per stream per node or
 * replayed from any seq, over REST, WebSocket frames and server-sent events. A stream is opened by
 * a chat message of kind {@code stream}, committed through ingest's commit-participant seam. Calls
 * {@code ingest}, {@code chat} (the dev bot joins a chat), {@code history} (its retention),
 * {@code session}, {@code auth}, {@code blobs}, {@code web}, {@code input}, {@code sql}, {@code lifecycle} and
 * {@code metrics}.
 */
package dev.waterline.streams;
