package dev.waterline.streams;

import java.util.ArrayList;
import java.util.List;

import dev.waterline.input.InputGate;
import tools.jackson.databind.JsonNode;

/**
 * The chunks of an append, as REST and WebSocket both take them (PROTOCOL.md §6): 1 to
 * {@code max-chunks-per-request} objects, each with an integral {@code seq} ≥ 1 and exactly one of
 * {@code data} (a string of at most {@code max-chunk-chars}) and {@code blobId}, their seqs
 * consecutive. Anything else is refused before the request is queued, so nothing of it is stored.
 */
final class ChunkInput {

    static final int MAX_BLOB_ID = 128;

    /** A refused input, with its answer. */
    static final class Refused extends RuntimeException {
        final Refusal refusal;

        Refused(Refusal refusal) {
            super(refusal.message(), null, false, false);
            this.refusal = refusal;
        }
    }

    private ChunkInput() {
    }

    static List<NewChunk> parse(JsonNode chunks, StreamProperties limits) {
        if (chunks == null || chunks.isNull()) {
            throw refused(Refusal.invalid("chunks is required"));
        }
        if (!chunks.isArray()) {
            throw refused(Refusal.invalid("chunks must be an array"));
        }
        if (chunks.isEmpty()) {
            throw refused(Refusal.invalid("chunks must hold at least one chunk"));
        }
        if (chunks.size() > limits.maxChunksPerRequest()) {
            throw refused(Refusal.invalid("at most " + limits.maxChunksPerRequest() + " chunks per request"));
        }
        List<NewChunk> out = new ArrayList<>(chunks.size());
        for (JsonNode c : chunks) {
            if (!c.isObject()) {
                throw refused(Refusal.invalid("every chunk must be an object with seq and data or blobId"));
            }
            JsonNode seq = c.get("seq");
            if (seq == null || !seq.isIntegralNumber() || !seq.canConvertToLong() || seq.asLong() < 1) {
                throw refused(Refusal.invalid("every chunk needs an integral seq of at least 1"));
            }
            JsonNode data = c.get("data");
            JsonNode blob = c.get("blobId");
            boolean hasData = data != null && !data.isNull();
            boolean hasBlob = blob != null && !blob.isNull();
            if (hasData == hasBlob) {
                throw refused(Refusal.invalid("chunk " + seq.asLong() + " must hold exactly one of data and blobId"));
            }
            if (hasData) {
                if (!data.isString()) {
                    throw refused(Refusal.invalid("chunk " + seq.asLong() + ": data must be a string"));
                }
                if (data.asString().length() > limits.maxChunkChars()) {
                    throw refused(Refusal.tooLarge("chunk " + seq.asLong() + ": data longer than " + limits.maxChunkChars()
                            + " characters (upload it as a blob)"));
                }
                out.add(new NewChunk(seq.asLong(), data.asString(), null));
            }
            else {
                if (!blob.isString() || InputGate.idProblem(blob.asString(), 1, MAX_BLOB_ID) != null) {
                    throw refused(Refusal.invalid("chunk " + seq.asLong() + ": blobId must be the id of a blob"));
                }
                out.add(new NewChunk(seq.asLong(), null, blob.asString()));
            }
        }
        long first = out.getFirst().seq();
        for (int i = 1; i < out.size(); i++) {
            if (out.get(i).seq() != first + i) {
                throw refused(Refusal.invalid("the chunks of one request must have consecutive seqs"));
            }
        }
        return out;
    }

    private static Refused refused(Refusal r) {
        return new Refused(r);
    }
}
