/**
 * The delivery buffer's storage: the PostgreSQL {@code outbox} table, read only in id order
 * (claims for the poller, the depth sampler), so that a log could serve every query. Rows are
 * written by {@code ingest} in the message's own transaction. Calls {@code metrics}.
 */
package dev.waterline.outbox;
