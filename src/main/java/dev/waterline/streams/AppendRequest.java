package dev.waterline.streams;

import java.util.List;

/**
 * One request to change a stream, waiting for its group commit: an append of chunks, a completion,
 * an abort (by the producer), or the idle reaper's abort. Every change of a stream goes through
 * {@link Appender}, so that a stream's changes commit, and reach its tails, in the order they arrived.
 */
record AppendRequest(String streamId, String userId, Op op, List<NewChunk> chunks, long lastSeq, String reason,
                     Reply reply, long receivedNanos) {

    enum Op { APPEND, COMPLETE, ABORT, IDLE_ABORT }

    static AppendRequest append(String streamId, String userId, List<NewChunk> chunks, Reply reply) {
        return new AppendRequest(streamId, userId, Op.APPEND, List.copyOf(chunks), 0, null, reply, System.nanoTime());
    }

    static AppendRequest complete(String streamId, String userId, long lastSeq, Reply reply) {
        return new AppendRequest(streamId, userId, Op.COMPLETE, List.of(), lastSeq, null, reply, System.nanoTime());
    }

    static AppendRequest abort(String streamId, String userId, String reason, Reply reply) {
        return new AppendRequest(streamId, userId, Op.ABORT, List.of(), 0, reason, reply, System.nanoTime());
    }

    static AppendRequest idleAbort(String streamId, Reply reply) {
        return new AppendRequest(streamId, null, Op.IDLE_ABORT, List.of(), 0, "idle", reply, System.nanoTime());
    }

    /** Where the outcome goes; exactly one method is called, once, on the writer's thread (quick). */
    interface Reply {

        /** Done (for an append: its chunks are committed, or were already): the stream as it now stands. */
        void done(StreamView stream);

        void refused(Refusal why);
    }
}
