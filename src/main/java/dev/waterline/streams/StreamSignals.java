package dev.waterline.streams;

import java.util.List;
import java.util.function.Consumer;

/**
 * How the nodes of a cluster tell each other that streams moved: after each commit of appends, the
 * committing node names the streams it changed with their new last seq and state, and every other
 * node's tails read what they lack from PostgreSQL, once per node. A port: {@code streams.local} is
 * the single node (nobody to tell), {@code streams.redis} the cluster (one Redis pub/sub channel,
 * {@code wl:streams}). Best effort: a lost signal costs at most two {@code tail-poll-interval}s, after
 * which each tail reads its stream's head itself.
 */
public interface StreamSignals {

    /** One stream's head after a commit. */
    record Signal(String streamId, long lastSeq, String state) {
    }

    /** Tells the other nodes (never this one: its tails were handed the chunks in memory). */
    void changed(List<Signal> signals);

    /** Where signals from the other nodes go. */
    void listen(Consumer<List<Signal>> listener);
}
