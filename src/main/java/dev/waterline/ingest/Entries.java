package dev.waterline.ingest;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.waterline.commit.EntryFields;

/**
 * The rules of the entries that name other entries (PROTOCOL.md §9), decided for one group commit
 * in the order its requests arrived, and what their commit must write. Pure: what the database
 * holds about the named messages and files is read first ({@link Known}, one round trip under the
 * batch's chat locks, so nothing it says can change before commit), and each decision also sees
 * the entries decided before it in the batch (an edit after a delete of the same message is
 * refused; a reaction put on twice is one entry).
 *
 * <ul>
 * <li>{@code send} with {@code replyTo}: a message of the same chat, else {@code not_found}; with
 *     attachments: each uploaded to this chat by this sender, stored, and not sent yet, else
 *     {@code not_found}.</li>
 * <li>{@code edit}: a {@code text} message of the same chat ({@code not_found}; another kind
 *     {@code invalid}), by the editor ({@code forbidden}), not deleted ({@code not_found}).</li>
 * <li>{@code delete}: the same, by its sender; a message already deleted answers the first delete's
 *     entry, and no new one is made. The write erases: the target's text, every edit's text, its
 *     reactions and attachments, and the copies in the outbox and hook deliveries (by the
 *     participants, from {@link #erased}).</li>
 * <li>{@code react}: a {@code text} message not deleted; a change that changes nothing is answered
 *     with the target and makes no entry; more than {@code maxReactions} distinct emoji of one user
 *     on one message, or a new emoji past {@code maxDistinct} on the message, is {@code invalid}.</li>
 * </ul>
 */
final class Entries {

    /** The delete entry that erased a message. */
    record Deletion(String messageId, long seq, String sentAt) {
    }

    /** A message an entry names, as the database holds it ({@code deletion} null while it stands). */
    record Target(String messageId, String chatId, long seq, String kind, String senderId, String sentAt, Deletion deletion) {
    }

    /** An uploaded file a send names; {@code free}: stored and not sent with any message yet. */
    record Attachment(String attachmentId, String chatId, String uploaderId, boolean free, String contentType, long size,
                      String name, String sha256) {
    }

    /**
     * What the database holds: the named messages by id, each (target, user)'s reactions on it
     * (by {@link #pair}), the distinct emoji on each message a reaction names, the named files by
     * id, and the ids of the edits of each message a delete names.
     */
    record Known(Map<String, Target> targets, Map<String, Set<String>> reactions, Map<String, Set<String>> emoji,
                 Map<String, Attachment> attachments, Map<String, List<String>> edits) {
    }

    sealed interface Decision {
    }

    /** Make the entry, with these frame fields ({@link EntryFields}). */
    record Make(String fields) implements Decision {
    }

    record Refuse(String code, String message) implements Decision {
    }

    /** Nothing to change: answer with the target. */
    record Unchanged(Target target) implements Decision {
    }

    /** Deleted before: answer with the delete that did it. */
    record AlreadyDeleted(String chatId, Deletion deletion) implements Decision {
    }

    /** One reaction row to put on (or take off) at commit. */
    record Reaction(String chatId, long targetSeq, String userId, String emoji, long entrySeq) {
    }

    /** One message erased by a delete of this batch. */
    record Erasure(String chatId, long targetSeq, String targetId, long deleteSeq) {
    }

    /** One file sent with a message of this batch, at its place among the message's files. */
    record Link(String attachmentId, long seq, int position) {
    }

    private final Known known;
    private final int maxReactions;
    private final int maxDistinct;
    /** Each touched message's distinct emoji, as the batch has left them so far. */
    private final Map<String, Set<String>> emojiNow = new HashMap<>();
    /** Deletions made in this batch, by target id. */
    private final Map<String, Deletion> deletedHere = new HashMap<>();
    /** Each touched (target, user)'s reactions as the batch has left them so far. */
    private final Map<String, Set<String>> reactionsNow = new HashMap<>();
    /** The last entry seq that put each (target, user, emoji) on, in this batch. */
    private final Map<String, Long> putOnAt = new HashMap<>();
    private final Set<String> attachedHere = new HashSet<>();
    private final Map<String, String[]> editedTo = new LinkedHashMap<>();
    private final List<Erasure> erasures = new ArrayList<>();
    private final List<Link> links = new ArrayList<>();
    /** Edits made in this batch, by target: the ids to erase if the target is deleted later in it. */
    private final Map<String, List<String>> editsHere = new HashMap<>();
    private final Set<String> erased = new LinkedHashSet<>();

    Entries(Known known, int maxReactions, int maxDistinct) {
        this.known = known;
        this.maxReactions = maxReactions;
        this.maxDistinct = maxDistinct;
    }

    static String pair(String targetId, String userId) {
        return targetId + '\u0000' + userId;
    }

    /** Whether {@code kind} is a change to another entry (edit, delete, reaction). */
    static boolean concernsKind(String kind) {
        return SendRequest.EDIT.equals(kind) || SendRequest.DELETE.equals(kind) || SendRequest.REACTION.equals(kind);
    }

    /** Whether {@code s} must be decided here (it names another entry or a file). */
    static boolean concerns(SendRequest s) {
        return s.refs().namesOthers();
    }

    Decision decide(SendRequest s) {
        SendRequest.Refs refs = s.refs();
        return switch (s.kind()) {
            case SendRequest.EDIT, SendRequest.DELETE, SendRequest.REACTION -> change(s, refs);
            default -> send(s, refs);
        };
    }

    private Decision send(SendRequest s, SendRequest.Refs refs) {
        EntryFields fields = EntryFields.of();
        if (refs.replyTo() != null) {
            Target t = known.targets().get(refs.replyTo());
            if (t == null || !t.chatId().equals(s.chatId())) {
                return new Refuse("not_found", "replyTo names no message of this chat");
            }
            fields.with("replyTo", refs.replyTo());
        }
        if (!refs.attachments().isEmpty()) {
            List<Map<String, Object>> details = new ArrayList<>();
            for (String id : refs.attachments()) {
                Attachment a = known.attachments().get(id);
                if (a == null || !a.chatId().equals(s.chatId()) || !a.uploaderId().equals(s.senderId()) || !a.free()
                        || attachedHere.contains(id)) {
                    return new Refuse("not_found", "attachment " + id + " is not one of yours in this chat, finished and unsent");
                }
            }
            for (String id : refs.attachments()) {
                Attachment a = known.attachments().get(id);
                Map<String, Object> d = new LinkedHashMap<>();
                d.put("attachmentId", id);
                d.put("contentType", a.contentType());
                d.put("size", a.size());
                if (a.name() != null) {
                    d.put("name", a.name());
                }
                d.put("sha256", a.sha256());
                details.add(d);
            }
            fields.with("attachments", refs.attachments()).with("attachmentDetails", details);
        }
        if (SendRequest.STREAM.equals(s.kind())) {
            fields.with("streamId", s.streamId());
        }
        return new Make(fields.members());
    }

    private Decision change(SendRequest s, SendRequest.Refs refs) {
        Target t = known.targets().get(refs.targetId());
        if (t == null || !t.chatId().equals(s.chatId())) {
            return new Refuse("not_found", "no such message in this chat");
        }
        Deletion deletion = deletedHere.getOrDefault(t.messageId(), t.deletion());
        if (!SendRequest.TEXT.equals(t.kind())) {
            return new Refuse("invalid", "only text messages can be " + past(s.kind()) + "; this entry is a " + t.kind());
        }
        if (SendRequest.DELETE.equals(s.kind())) {
            if (!t.senderId().equals(s.senderId())) {
                return new Refuse("forbidden", "only its sender may delete a message");
            }
            if (deletion != null) {
                return new AlreadyDeleted(s.chatId(), deletion);
            }
            return new Make(EntryFields.of().with("targetId", t.messageId()).members());
        }
        if (deletion != null) {
            return new Refuse("not_found", "the message was deleted");
        }
        if (SendRequest.EDIT.equals(s.kind())) {
            if (!t.senderId().equals(s.senderId())) {
                return new Refuse("forbidden", "only its sender may edit a message");
            }
            return new Make(EntryFields.of().with("targetId", t.messageId()).members());
        }
        Set<String> mine = reactions(t.messageId(), s.senderId());
        if (mine.contains(refs.emoji()) == refs.on()) {
            return new Unchanged(t);
        }
        if (refs.on() && mine.size() >= maxReactions) {
            return new Refuse("invalid", "at most " + maxReactions + " different reactions per user on one message");
        }
        Set<String> onMessage = emojiOn(t.messageId());
        if (refs.on() && !onMessage.contains(refs.emoji()) && onMessage.size() >= maxDistinct) {
            return new Refuse("invalid", "at most " + maxDistinct + " different reactions on one message");
        }
        return new Make(EntryFields.of().with("targetId", t.messageId()).with("emoji", refs.emoji()).with("on", refs.on())
                .members());
    }

    private static String past(String kind) {
        return switch (kind) {
            case SendRequest.EDIT -> "edited";
            case SendRequest.DELETE -> "deleted";
            default -> "reacted to";
        };
    }

    /** The distinct emoji on {@code targetId} as the batch has left them so far (an emoji taken back by its last user may stay: an upper bound). */
    private Set<String> emojiOn(String targetId) {
        return emojiNow.computeIfAbsent(targetId, k -> new HashSet<>(known.emoji().getOrDefault(k, Set.of())));
    }

    private Set<String> reactions(String targetId, String userId) {
        return reactionsNow.computeIfAbsent(pair(targetId, userId),
                k -> new LinkedHashSet<>(known.reactions().getOrDefault(k, Set.of())));
    }

    /** {@code s}, decided {@link Make}, was given {@code seq} and {@code messageId}: what later decisions and the writes must know. */
    void made(SendRequest s, long seq, String messageId, String sentAt) {
        SendRequest.Refs refs = s.refs();
        switch (s.kind()) {
            case SendRequest.EDIT -> {
                Target t = known.targets().get(refs.targetId());
                editedTo.put(t.messageId(), new String[] {t.chatId(), Long.toString(t.seq()), s.body()});
                editsHere.computeIfAbsent(t.messageId(), k -> new ArrayList<>()).add(messageId);
            }
            case SendRequest.DELETE -> {
                Target t = known.targets().get(refs.targetId());
                deletedHere.put(t.messageId(), new Deletion(messageId, seq, sentAt));
                editedTo.remove(t.messageId());
                erasures.add(new Erasure(t.chatId(), t.seq(), t.messageId(), seq));
                erased.add(t.messageId());
                erased.addAll(known.edits().getOrDefault(t.messageId(), List.of()));
                erased.addAll(editsHere.getOrDefault(t.messageId(), List.of()));
            }
            case SendRequest.REACTION -> {
                Set<String> mine = reactions(refs.targetId(), s.senderId());
                String key = pair(refs.targetId(), s.senderId()) + '\u0000' + refs.emoji();
                if (refs.on()) {
                    mine.add(refs.emoji());
                    emojiOn(refs.targetId()).add(refs.emoji());
                    putOnAt.put(key, seq);
                }
                else {
                    mine.remove(refs.emoji());
                    putOnAt.remove(key);
                }
            }
            default -> {
                int position = 0;
                for (String id : refs.attachments()) {
                    attachedHere.add(id);
                    links.add(new Link(id, seq, position++));
                }
            }
        }
    }

    /** The new text of each message edited in this batch and not deleted after: chat, seq, body. */
    List<String[]> edits() {
        return List.copyOf(editedTo.values());
    }

    List<Erasure> erasures() {
        return erasures;
    }

    List<Link> links() {
        return links;
    }

    /**
     * Every message whose text a delete of this batch erased: the targets, and the edits of them
     * (those committed before and those of this batch), whose copies must go too.
     */
    Set<String> erased() {
        return erased;
    }

    /** Reaction rows to put on at commit (new, or put on again by a later entry). */
    List<Reaction> reactionsOn() {
        List<Reaction> out = new ArrayList<>();
        reactionsNow.forEach((pair, now) -> {
            Target t = known.targets().get(pair.substring(0, pair.indexOf('\u0000')));
            String user = pair.substring(pair.indexOf('\u0000') + 1);
            for (String emoji : now) {
                Long at = putOnAt.get(pair + '\u0000' + emoji);
                if (at != null) {
                    out.add(new Reaction(t.chatId(), t.seq(), user, emoji, at));
                }
            }
        });
        return out;
    }

    /** Reaction rows to take off at commit: on before the batch, off after it. */
    List<Reaction> reactionsOff() {
        List<Reaction> out = new ArrayList<>();
        reactionsNow.forEach((pair, now) -> {
            Target t = known.targets().get(pair.substring(0, pair.indexOf('\u0000')));
            String user = pair.substring(pair.indexOf('\u0000') + 1);
            for (String emoji : known.reactions().getOrDefault(pair, Set.of())) {
                if (!now.contains(emoji)) {
                    out.add(new Reaction(t.chatId(), t.seq(), user, emoji, 0));
                }
            }
        });
        return out;
    }
}
