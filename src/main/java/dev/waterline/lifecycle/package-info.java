/**
 * What the background loops share: running a loop so that every failure it meets is logged and
 * counted ({@code waterline_loop_errors_total{loop}}) and an {@link java.lang.Error} takes the
 * process down ({@link dev.waterline.lifecycle.Loops}, {@link dev.waterline.lifecycle.FatalErrors});
 * the bounded queue sharded by key in front of the group-commit writers of ingest and the stream
 * appender ({@link dev.waterline.lifecycle.ShardedQueues}); gathering a group-commit batch
 * ({@link dev.waterline.lifecycle.Batches}); isolating the one item
 * of a batch that cannot be stored ({@link dev.waterline.lifecycle.Isolation}); telling an
 * unreachable database or Redis from a bad item ({@link dev.waterline.lifecycle.Failures}); and
 * stopping loop threads within a bound ({@link dev.waterline.lifecycle.Workers}). Calls
 * {@code metrics}.
 */
package dev.waterline.lifecycle;
