package dev.waterline.lifecycle;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.function.BooleanSupplier;

/**
 * The bounded queue that ingest and the stream appender put in front of their group-commit
 * writers: one {@link ArrayBlockingQueue} per writer, together about {@code capacity} long (each
 * {@code capacity / shards}, at least one). An item goes to the shard its key hashes to, so one
 * key's items (a chat's sends, a stream's requests) are always taken by the same writer, in the
 * order they came. Full means full: an item a shard cannot take is refused, never dropped
 * silently, and the caller answers it ({@code overloaded}).
 */
public final class ShardedQueues<T> {

    private final List<BlockingQueue<T>> shards;
    private final int perShard;

    public ShardedQueues(int shards, int capacity) {
        if (shards < 1) {
            throw new IllegalArgumentException("at least one shard, not " + shards);
        }
        this.perShard = Math.max(1, capacity / shards);
        List<BlockingQueue<T>> queues = new ArrayList<>(shards);
        for (int i = 0; i < shards; i++) {
            queues.add(new ArrayBlockingQueue<>(perShard));
        }
        this.shards = List.copyOf(queues);
    }

    /** How many shards (one per writer). */
    public int shards() {
        return shards.size();
    }

    /** How many items each shard holds at most. */
    public int perShard() {
        return perShard;
    }

    /** Shard {@code i}, for its writer to drain. */
    public BlockingQueue<T> shard(int i) {
        return shards.get(i);
    }

    /** The shard that takes the items of {@code key}. */
    public int shardOf(Object key) {
        return Math.floorMod(key.hashCode(), shards.size());
    }

    /**
     * Queues {@code item} on its key's shard; false when {@code accepting} says no (the owner is
     * stopping: the caller answers {@code unavailable}) or the shard is full (the caller answers
     * {@code overloaded}). The owner's stop may have drained the queues for the last time between
     * the check and the offer: then the item is taken back and false returned, so the caller
     * answers it. If it is gone already, a writer or the stop took it, and answers it.
     */
    public boolean offer(Object key, T item, BooleanSupplier accepting) {
        BlockingQueue<T> queue = shards.get(shardOf(key));
        if (!accepting.getAsBoolean() || !queue.offer(item)) {
            return false;
        }
        return accepting.getAsBoolean() || !queue.remove(item);
    }

    /** Items waiting in all shards. */
    public int size() {
        int n = 0;
        for (BlockingQueue<T> q : shards) {
            n += q.size();
        }
        return n;
    }

    /** What all the shards hold together at most. */
    public int capacity() {
        return perShard * shards.size();
    }

    /** How full the fullest shard is, 0 to 1: one hot key can fill its shard while the rest are empty. */
    public double fullest() {
        double most = 0;
        for (BlockingQueue<T> q : shards) {
            most = Math.max(most, q.size() / (double) perShard);
        }
        return most;
    }

    /** Takes everything still queued, shard by shard (each in its order), for the owner's stop to answer. */
    public List<T> drain() {
        List<T> left = new ArrayList<>();
        shards.forEach(q -> q.drainTo(left));
        return left;
    }
}
