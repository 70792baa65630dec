package dev.waterline.lifecycle;

import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * Batch isolation: one item that a batched write cannot store must not fail the others.
 *
 * <p>{@link #commit} commits the whole batch; if that throws, it splits the batch into two
 * halves, in order, and commits each the same way, so the items that can be stored are, in their
 * original order (a chat's sends keep their seq order), and an item that fails on its own is
 * handed to {@code poisoned} with its failure. A batch of n items with one poison takes about
 * 2·log2(n) extra commits; with the input gate in front such an item is a bug, not a workload.
 *
 * <p>{@code commit} must deal with failures that are not about its items (an unreachable
 * database: answer them {@code unavailable} and return normally): whatever it throws is taken to
 * be caused by some item. An {@link Error} is never caught.
 */
public final class Isolation {

    private Isolation() {
    }

    /** Returns how many items were poisoned. */
    public static <T> int commit(List<T> items, Consumer<List<T>> commit, BiConsumer<T, RuntimeException> poisoned) {
        if (items.isEmpty()) {
            return 0;
        }
        try {
            commit.accept(items);
            return 0;
        }
        catch (RuntimeException e) {
            if (items.size() == 1) {
                poisoned.accept(items.getFirst(), e);
                return 1;
            }
            int half = items.size() / 2;
            return commit(items.subList(0, half), commit, poisoned)
                    + commit(items.subList(half, items.size()), commit, poisoned);
        }
    }
}
