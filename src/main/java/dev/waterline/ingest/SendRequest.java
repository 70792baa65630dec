package dev.waterline.ingest;

import java.util.List;

/**
 * A validated request for a new entry of a chat's log (PROTOCOL.md §9) waiting to be persisted,
 * with where to answer it: a {@code send} (kind {@code text}, perhaps replying and with
 * attachments), a stream's opening ({@code stream}), an {@code edit}, a {@code delete} or a
 * {@code reaction}. What the entry names of other entries and files is in {@code refs}.
 */
public record SendRequest(String senderId, String correlationId, String chatId, String body, SendReply reply,
                          String kind, String streamId, Refs refs) {

    /** A message's kind: a send. */
    public static final String TEXT = "text";
    /** A message's kind: the message that opens a stream (PROTOCOL.md §6), naming it. */
    public static final String STREAM = "stream";
    /** An entry's kind: a new text for an earlier text message ({@code targetId}). */
    public static final String EDIT = "edit";
    /** An entry's kind: the erasure of an earlier text message ({@code targetId}). */
    public static final String DELETE = "delete";
    /** An entry's kind: a reaction put on ({@code on}) or taken back from an earlier text message. */
    public static final String REACTION = "reaction";

    /**
     * What an entry names: the message it changes ({@code targetId}: edit, delete, reaction), the
     * message it answers ({@code replyTo}) and its attachments (a send's), and a reaction's
     * {@code emoji} and {@code on}.
     */
    public record Refs(String targetId, String replyTo, List<String> attachments, String emoji, boolean on) {

        public static final Refs NONE = new Refs(null, null, List.of(), null, false);

        public Refs {
            attachments = attachments == null ? List.of() : List.copyOf(attachments);
        }

        /** Whether the commit must read what this names (another entry, a file) before it decides. */
        boolean namesOthers() {
            return targetId != null || replyTo != null || !attachments.isEmpty();
        }
    }

    /** A {@code send}: a text message. */
    public SendRequest(String senderId, String correlationId, String chatId, String body, SendReply reply) {
        this(senderId, correlationId, chatId, body, reply, TEXT, null, Refs.NONE);
    }

    /** A stream's opening message. */
    public SendRequest(String senderId, String correlationId, String chatId, String body, SendReply reply, String kind,
                       String streamId) {
        this(senderId, correlationId, chatId, body, reply, kind, streamId, Refs.NONE);
    }

    public SendRequest {
        refs = refs == null ? Refs.NONE : refs;
    }

    /** A {@code send} replying to {@code replyTo} (or null) with {@code attachments}. */
    public static SendRequest text(String senderId, String correlationId, String chatId, String body, String replyTo,
                                   List<String> attachments, SendReply reply) {
        return new SendRequest(senderId, correlationId, chatId, body, reply, TEXT, null,
                new Refs(null, replyTo, attachments, null, false));
    }

    /** An {@code edit} of {@code targetId} to {@code body}. */
    public static SendRequest edit(String senderId, String correlationId, String chatId, String targetId, String body,
                                   SendReply reply) {
        return new SendRequest(senderId, correlationId, chatId, body, reply, EDIT, null, new Refs(targetId, null, null, null, false));
    }

    /** A {@code delete} of {@code targetId}. */
    public static SendRequest delete(String senderId, String correlationId, String chatId, String targetId, SendReply reply) {
        return new SendRequest(senderId, correlationId, chatId, "", reply, DELETE, null, new Refs(targetId, null, null, null, false));
    }

    /** A {@code react}: {@code emoji} put on ({@code on}) or taken back from {@code targetId}. */
    public static SendRequest react(String senderId, String correlationId, String chatId, String targetId, String emoji,
                                    boolean on, SendReply reply) {
        return new SendRequest(senderId, correlationId, chatId, "", reply, REACTION, null, new Refs(targetId, null, null, emoji, on));
    }

    record Key(String senderId, String correlationId) {
    }

    Key key() {
        return new Key(senderId, correlationId);
    }
}
