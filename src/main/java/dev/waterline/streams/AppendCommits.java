package dev.waterline.streams;

import java.util.ArrayList;
import java.util.List;

import dev.waterline.lifecycle.Failures;
import dev.waterline.lifecycle.Isolation;
import dev.waterline.lifecycle.Loops;
import org.springframework.stereotype.Component;

/**
 * One step of the appender's writers: a batch committed ({@link AppendRepository}), then every request
 * answered and the committed chunks handed over to this node's tails and signalled to the other
 * nodes. A failure of one request's data is split down to it ({@link Isolation}) and that request
 * alone is refused {@code invalid}; a missing partition or an outage refuses the batch
 * {@code unavailable}; nothing after the commit may throw back into the isolation (it would commit
 * again): a failed answer or hand-over is logged and counted ({@link Loops#failed}).
 */
@Component
class AppendCommits {

    private final AppendRepository store;
    private final Loops loops;
    private final Tails tails;
    private final StreamSignals signals;
    private final ChunkPartitions partitions;
    private final StreamMetrics metrics;

    AppendCommits(AppendRepository store, Loops loops, Tails tails, StreamSignals signals, ChunkPartitions partitions,
                  StreamMetrics metrics) {
        this.store = store;
        this.loops = loops;
        this.tails = tails;
        this.signals = signals;
        this.partitions = partitions;
        this.metrics = metrics;
    }

    /** Commits one batch and answers every request in it, isolating any request that cannot be stored. */
    void persist(List<AppendRequest> batch) {
        int poisoned = Isolation.commit(new ArrayList<>(batch), this::commit, (r, e) -> {
            loops.failed(Appender.LOOP, "a request to stream " + r.streamId()
                    + " failed its group commit alone and is refused as invalid", e);
            answer(r, Refusal.invalid("the request could not be stored; nothing of it was"));
        });
        if (poisoned > 0) {
            metrics.poisoned(poisoned);
        }
    }

    /** Commits the requests and answers them; throws only for a failure one of them may have caused. */
    private void commit(List<AppendRequest> requests) {
        AppendRepository.Outcome outcome;
        try {
            outcome = store.commit(requests);
        }
        catch (RuntimeException e) {
            if (ChunkPartitionRepository.missingPartition(e)) {
                partitions.wake();
                loops.failed(Appender.LOOP, "no partition of stream_chunks for now: " + requests.size()
                        + " requests refused (unavailable)", e);
                refuseAll(requests, Refusal.unavailable("the server is not ready to store chunks; nothing stored, retry"));
                return;
            }
            if (Failures.causedByItem(e)) {
                throw e;
            }
            loops.failed(Appender.LOOP, requests.size() + " stream requests refused (unavailable)", e);
            refuseAll(requests, Refusal.unavailable(Failures.infrastructure(e)
                    ? "the database could not be reached; nothing stored" : "the server could not store this; nothing stored, retry"));
            return;
        }
        long committedAt = System.currentTimeMillis();
        // Committed: nothing from here on may throw back into the isolation (it would commit again).
        for (int i = 0; i < requests.size(); i++) {
            AppendRequest r = requests.get(i);
            switch (outcome.answers().get(i)) {
                case AppendDecider.Refused(Refusal why) -> answer(r, why);
                case AppendDecider.Done(StreamView view) -> {
                    try {
                        r.reply().done(view);
                    }
                    catch (RuntimeException e) {
                        loops.failed(Appender.LOOP, "answering a stream request", e);
                    }
                    metrics.answered(r, System.nanoTime() - r.receivedNanos());
                }
            }
        }
        metrics.stored(outcome.stored(), outcome.closed());
        if (!outcome.changes().isEmpty()) {
            List<Appender.Change> changes = new ArrayList<>(outcome.changes().size());
            for (Appender.Change c : outcome.changes()) {
                changes.add(c.committedAt(committedAt));
            }
            try {
                tails.committed(changes);
            }
            catch (RuntimeException e) {
                // committed: the tails' poll finds what they were not handed
                loops.failed(Appender.LOOP, "handing committed chunks to this node's tails", e);
            }
            try {
                signals.changed(changes.stream().map(c -> new StreamSignals.Signal(c.streamId(), c.lastSeq(), c.state())).toList());
            }
            catch (RuntimeException e) {
                loops.failed(Appender.LOOP, "signalling committed chunks to the other nodes", e);
            }
        }
    }

    private void answer(AppendRequest r, Refusal why) {
        metrics.refused(why.code());
        try {
            r.reply().refused(why);
        }
        catch (RuntimeException e) {
            loops.failed(Appender.LOOP, "answering a stream request", e);
        }
    }

    void refuseAll(List<AppendRequest> requests, Refusal why) {
        requests.forEach(r -> answer(r, why));
    }

}
