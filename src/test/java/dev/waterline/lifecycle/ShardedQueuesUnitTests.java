package dev.waterline.lifecycle;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ShardedQueuesUnitTests {

    record Item(String key, int n) {
    }

    @Test
    void oneKeysItemsAllGoToOneShardInTheOrderTheyCame() {
        ShardedQueues<Item> queues = new ShardedQueues<>(4, 400);
        for (int n = 0; n < 50; n++) {
            for (String key : List.of("chat-a", "chat-b", "chat-c")) {
                assertThat(queues.offer(key, new Item(key, n), () -> true)).isTrue();
            }
        }
        for (String key : List.of("chat-a", "chat-b", "chat-c")) {
            int shard = queues.shardOf(key);
            assertThat(shard).isEqualTo(Math.floorMod(key.hashCode(), 4));
            List<Integer> seen = new ArrayList<>();
            for (int i = 0; i < queues.shards(); i++) {
                for (Item item : queues.shard(i)) {
                    if (item.key().equals(key)) {
                        assertThat(i).as("the shard of " + key).isEqualTo(shard);
                        seen.add(item.n());
                    }
                }
            }
            assertThat(seen).hasSize(50).isSorted();
        }
        assertThat(queues.size()).isEqualTo(150);
    }

    @Test
    void aFullShardRefusesTheItemAndKeepsWhatItHolds() {
        ShardedQueues<Item> queues = new ShardedQueues<>(2, 6);
        assertThat(queues.perShard()).isEqualTo(3);
        assertThat(queues.capacity()).isEqualTo(6);
        for (int n = 0; n < 3; n++) {
            assertThat(queues.offer("hot", new Item("hot", n), () -> true)).isTrue();
        }
        assertThat(queues.offer("hot", new Item("hot", 3), () -> true)).as("its shard is full").isFalse();
        assertThat(queues.size()).isEqualTo(3);
        assertThat(queues.fullest()).isEqualTo(1.0);
        assertThat(queues.shard(queues.shardOf("hot"))).extracting(Item::n).containsExactly(0, 1, 2);
    }

    @Test
    void eachShardHoldsAtLeastOneItem() {
        ShardedQueues<Item> queues = new ShardedQueues<>(8, 3);
        assertThat(queues.perShard()).isEqualTo(1);
        assertThatThrownBy(() -> new ShardedQueues<Item>(0, 10)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void anOwnerThatIsNotAcceptingRefusesAndAnItemOfferedAsItStoppedIsTakenBack() {
        ShardedQueues<Item> queues = new ShardedQueues<>(2, 10);
        assertThat(queues.offer("k", new Item("k", 0), () -> false)).isFalse();
        assertThat(queues.size()).isZero();

        // accepting at the check, stopped by the time the item is queued: the caller gets it back to answer
        AtomicBoolean first = new AtomicBoolean(true);
        assertThat(queues.offer("k", new Item("k", 1), () -> first.getAndSet(false))).isFalse();
        assertThat(queues.size()).as("taken back").isZero();
    }

    @Test
    void drainTakesEverythingQueuedShardByShardInOrder() {
        ShardedQueues<Item> queues = new ShardedQueues<>(3, 30);
        List<Item> offered = new ArrayList<>();
        for (int n = 0; n < 20; n++) {
            Item item = new Item("key-" + (n % 5), n);
            offered.add(item);
            assertThat(queues.offer(item.key(), item, () -> true)).isTrue();
        }
        List<Item> left = queues.drain();
        assertThat(left).containsExactlyInAnyOrderElementsOf(offered);
        for (String key : List.of("key-0", "key-1", "key-2", "key-3", "key-4")) {
            assertThat(left.stream().filter(i -> i.key().equals(key)).map(Item::n).toList()).isSorted();
        }
        assertThat(queues.size()).isZero();
        assertThat(queues.fullest()).isZero();
        assertThat(queues.drain()).isEmpty();
    }
}
