package dev.waterline.streams;

/**
 * Where one subscription's frames go: a WebSocket connection ({@code chunk} and {@code stream}
 * frames) or a server-sent-event response. Calls come from one thread at a time (the replay's, then
 * the tail's), in order; none may wait for the client (a sink queues, and drops a client that does
 * not read).
 */
interface Subscriber {

    /** Writes one chunk; false when the sink is gone. */
    boolean chunk(String streamId, Chunk chunk);

    /** Writes the stream's state; false when the sink is gone. */
    boolean state(String streamId, String state, long lastSeq);

    /** The subscription is over: its stream is complete or aborted (the final state was written), or it was cancelled. */
    void end();

    /** The subscription could not go on (its replay could not read the database); it is over. */
    void failed(String code, String message);

    boolean isOpen();

    /** Characters written to this sink and not yet taken by the client, about (replay waits while there are many). */
    long backlog();
}
