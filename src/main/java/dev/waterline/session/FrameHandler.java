package dev.waterline.session;

import java.util.Set;

import tools.jackson.databind.JsonNode;

/**
 * Answers the client frames of one capability (PROTOCOL.md §3, §6): messages ({@code send}),
 * acks, read receipts, and later streams. The gateway parses each frame, passes every string in
 * it through the input gate, and hands it to the handler registered for its {@code type}; a type
 * no handler claims is answered {@code invalid}. A handler validates its own fields, answers
 * errors with {@link Frames#error} on the session, and must not block for long: it runs on the
 * connection's reading thread.
 */
public interface FrameHandler {

    /** The {@code type}s this handler answers; no two handlers may claim one. */
    Set<String> types();

    void handle(ClientSession from, String type, JsonNode frame);
}
