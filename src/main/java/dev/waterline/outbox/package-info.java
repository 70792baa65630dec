/**
 * The delivery buffer: the {@link dev.waterline.outbox.OutboxStore} port (append inside the group
 * commit, claim due rows, retire, reclaim below a line, scan for an index rebuild), the row type
 * every delivery path shares ({@link dev.waterline.outbox.OutboxRow}), and the depth and age
 * gauges. {@code outbox.postgres} is the adapter: the {@code outbox} table, read only in id
 * order, so that a log could serve every query. Calls {@code commit} (the append joins
 * ingest's group commit), {@code sql}, {@code lifecycle} and
 * {@code metrics}.
 */
package dev.waterline.outbox;
