package dev.waterline.streams;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * One stored chunk, as read (PROTOCOL.md §6): {@code data}, or a blob's {@code blobId}, {@code size}
 * and {@code contentType}; {@code at} is when it was committed (the database's clock). Its
 * WebSocket frame and server-sent event are built once, on first use, and shared by every
 * subscriber it is fanned out to. {@code committedAtMillis} is set only on a chunk handed over in
 * memory after its commit (what the delivery histogram measures from); 0 otherwise.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public final class Chunk {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final long seq;
    private final String data;
    private final String blobId;
    private final Long size;
    private final String contentType;
    private final String at;
    private final long committedAtMillis;
    private volatile String frame;
    private volatile String event;

    Chunk(long seq, String data, String blobId, Long size, String contentType, String at, long committedAtMillis) {
        this.seq = seq;
        this.data = data;
        this.blobId = blobId;
        this.size = size;
        this.contentType = contentType;
        this.at = at;
        this.committedAtMillis = committedAtMillis;
    }

    public long getSeq() {
        return seq;
    }

    public String getData() {
        return data;
    }

    public String getBlobId() {
        return blobId;
    }

    public Long getSize() {
        return size;
    }

    public String getContentType() {
        return contentType;
    }

    public String getAt() {
        return at;
    }

    @JsonIgnore
    long committedAtMillis() {
        return committedAtMillis;
    }

    /** Whether {@code other} (a producer's retry) holds the same content as this stored chunk. */
    boolean sameContent(NewChunk other) {
        return other.data() != null ? other.data().equals(data) : other.blobId().equals(blobId);
    }

    private ObjectNode body(String streamId) {
        ObjectNode n = JSON.createObjectNode();
        if (streamId != null) {
            n.put("type", "chunk").put("streamId", streamId);
        }
        n.put("seq", seq);
        if (data != null) {
            n.put("data", data);
        }
        else {
            n.put("blobId", blobId).put("size", size).put("contentType", contentType);
        }
        n.put("at", at);
        return n;
    }

    /** The {@code chunk} frame (PROTOCOL.md §6), built once. */
    String frame(String streamId) {
        String f = frame;
        if (f == null) {
            f = JSON.writeValueAsString(body(streamId));
            frame = f;
        }
        return f;
    }

    /** The server-sent event: {@code id: <seq>}, {@code event: chunk}, the chunk as JSON; built once. */
    String event() {
        String e = event;
        if (e == null) {
            e = "id: " + seq + "\nevent: chunk\ndata: " + JSON.writeValueAsString(body(null)) + "\n\n";
            event = e;
        }
        return e;
    }

    /** Characters this chunk takes in a subscriber's queue, about. */
    long weight() {
        return 96 + (data != null ? data.length() : 64);
    }
}
