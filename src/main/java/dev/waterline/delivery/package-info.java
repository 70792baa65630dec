/**
 * Live delivery to connected clients, in two paths. The fast path takes rows straight from
 * ingest after commit (bounded queue, shedding to the poller when full, no lease). The outbox
 * poller claims due rows oldest first under a lease and (re)delivers what the fast path shed or
 * the client has not acked, retiring rows that are acked or whose recipient is offline. Both
 * record every delivery in the watermark index before writing the frame. Calls {@code ingest} (its
 * commit-participant port: the outbox rows go into the group commit), {@code commit}, {@code outbox},
 * {@code watermark}, {@code presence} (recipients on other nodes), {@code reaper} (the attempts reaper's withdrawals),
 * {@code reclaim} (its interval, which bounds the poller's lease in the cluster), {@code session}, {@code lifecycle} and
 * {@code metrics}.
 */
package dev.waterline.delivery;
