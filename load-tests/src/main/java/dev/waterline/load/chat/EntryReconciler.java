package dev.waterline.load.chat;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import tools.jackson.databind.JsonNode;

/**
 * The proof that edits, deletes and reactions took effect (PROTOCOL.md §9), beside
 * {@link Reconciler}'s proof that each of them, as any entry of a chat's log, was kept and
 * delivered. Pure logic: the run collects what was accepted and what history shows, this class
 * judges them.
 *
 * <ul>
 * <li>Delete: the target's text is gone everywhere. Its history entry and the single entry's
 * answer ({@code GET …/messages/{id}}) show {@code deleted: true} with body {@code ""}, and every
 * edit entry of it in history has body {@code ""}.</li>
 * <li>Edit: the target's current body is the body of its last edit by seq, and it shows that it
 * was edited; the entry of an accepted edit of a message still there carries the body sent.</li>
 * <li>Reaction: on a message still there, each emoji's count is the number of users whose last
 * reaction entry for it (by seq) put it on, and the reader's {@code myReactions} are its own.</li>
 * </ul>
 *
 * The entries the rules start from are the accepted ones and, beside them, the entries of the
 * same kinds that history holds: an entry committed whose answer never reached its sender (its
 * connection died with the answer in flight, and the run ended before its retry) changed the
 * message all the same; accepted ones the history lacks are {@link Reconciler}'s G1 losses.
 */
public final class EntryReconciler {

    /** An accepted edit, delete or reaction: what its sender sent and what the answer said. */
    public record Entry(String kind, String messageId, String chatId, String senderId, long seq, String targetId,
                        String body, String emoji, boolean on) {

        public static Entry edit(String messageId, String chatId, String senderId, long seq, String targetId, String body) {
            return new Entry("edit", messageId, chatId, senderId, seq, targetId, body, null, false);
        }

        public static Entry delete(String messageId, String chatId, String senderId, long seq, String targetId) {
            return new Entry("delete", messageId, chatId, senderId, seq, targetId, null, null, false);
        }

        public static Entry reaction(String messageId, String chatId, String senderId, long seq, String targetId, String emoji, boolean on) {
            return new Entry("reaction", messageId, chatId, senderId, seq, targetId, null, emoji, on);
        }
    }

    /**
     * One entry as history (or the single entry's answer) shows it: for a text entry its current
     * state, for the others what they carry. {@code reactions} and {@code myReactions} are empty
     * when absent.
     */
    public record Shown(String messageId, String chatId, long seq, String kind, String senderId, String body, boolean deleted,
                        boolean edited, String targetId, String emoji, boolean on, Map<String, Integer> reactions,
                        Set<String> myReactions) {

        public static Shown text(String messageId, String chatId, long seq, String senderId, String body) {
            return new Shown(messageId, chatId, seq, "text", senderId, body, false, false, null, null, false, Map.of(), Set.of());
        }

        public Shown withState(String body, boolean deleted, boolean edited, Map<String, Integer> reactions, Set<String> myReactions) {
            return new Shown(messageId, chatId, seq, kind, senderId, body, deleted, edited, targetId, emoji, on, reactions, myReactions);
        }

        /** An entry of a history page or the single entry's answer, as PROTOCOL.md §4 and §9 give it. */
        public static Shown of(JsonNode m) {
            Map<String, Integer> reactions = new TreeMap<>();
            JsonNode r = m.path("reactions");
            if (r.isObject()) {
                r.properties().forEach(e -> reactions.put(e.getKey(), e.getValue().asInt()));
            }
            Set<String> mine = new TreeSet<>();
            m.path("myReactions").forEach(n -> mine.add(n.asString()));
            JsonNode editedAt = m.path("editedAt");
            return new Shown(m.get("messageId").asString(), m.get("chatId").asString(), m.get("seq").asLong(),
                    text(m, "kind", "text"), text(m, "senderId", null), text(m, "body", ""), m.path("deleted").asBoolean(false),
                    !editedAt.isMissingNode() && !editedAt.isNull(), text(m, "targetId", null), text(m, "emoji", null),
                    m.path("on").asBoolean(false), reactions, mine);
        }

        private static String text(JsonNode m, String field, String absent) {
            JsonNode n = m.get(field);
            return n == null || n.isNull() ? absent : n.asString();
        }

        public Entry asEntry() {
            return new Entry(kind, messageId, chatId, senderId, seq, targetId, body, emoji, on);
        }
    }

    /** One rule a message breaks: the message, its chat, the rule ({@code delete}, {@code edit}, {@code reaction}) and how. */
    public record Mismatch(String messageId, String chatId, String rule, String detail) {
    }

    private EntryReconciler() {
    }

    /**
     * @param accepted every accepted edit, delete and reaction
     * @param historyByChat every entry of each chat's history after the run, in seq order
     * @param readerOfChat the member whose token read each chat's history (whose {@code myReactions} it shows)
     * @param fetched the single entry's answer for the target of each accepted delete, by messageId (absent: not asked or 404)
     */
    public static List<Mismatch> reconcile(List<Entry> accepted, Map<String, List<Shown>> historyByChat,
                                           Map<String, String> readerOfChat, Map<String, Shown> fetched) {
        // every entry of each target, accepted or found in history, once by messageId (the accepted one's fields win)
        Map<String, Map<String, Entry>> byTarget = new LinkedHashMap<>();
        Map<String, Shown> shownById = new HashMap<>();
        Map<String, String> chatOfTarget = new HashMap<>();
        for (var chat : historyByChat.entrySet()) {
            for (Shown s : chat.getValue()) {
                shownById.put(s.messageId(), s);
                if (isEntryKind(s.kind()) && s.targetId() != null) {
                    byTarget.computeIfAbsent(s.targetId(), k -> new LinkedHashMap<>()).put(s.messageId(), s.asEntry());
                    chatOfTarget.put(s.targetId(), s.chatId());
                }
            }
        }
        for (Entry e : accepted) {
            byTarget.computeIfAbsent(e.targetId(), k -> new LinkedHashMap<>()).put(e.messageId(), e);
            chatOfTarget.put(e.targetId(), e.chatId());
        }
        List<Mismatch> out = new ArrayList<>();
        for (Entry e : accepted) {
            if (e.kind().equals("delete")) {
                checkDelete(e, historyByChat.getOrDefault(e.chatId(), List.of()), shownById, fetched, out);
            }
        }
        for (var t : byTarget.entrySet()) {
            String targetId = t.getKey();
            String chatId = chatOfTarget.get(targetId);
            List<Entry> entries = t.getValue().values().stream().sorted(Comparator.comparingLong(Entry::seq)).toList();
            if (entries.stream().anyMatch(e -> e.kind().equals("delete"))) {
                continue;   // its text is gone: checked above, nothing else of it is shown
            }
            Shown target = shownById.get(targetId);
            if (target == null) {
                out.add(new Mismatch(targetId, chatId, entries.getLast().kind(), "the target of accepted entries is not in history"));
                continue;
            }
            checkEdits(target, entries, accepted, shownById, out);
            checkReactions(target, entries, readerOfChat.get(chatId), out);
        }
        return out;
    }

    private static boolean isEntryKind(String kind) {
        return "edit".equals(kind) || "delete".equals(kind) || "reaction".equals(kind);
    }

    private static void checkDelete(Entry d, List<Shown> history, Map<String, Shown> shownById, Map<String, Shown> fetched,
                                    List<Mismatch> out) {
        Shown target = shownById.get(d.targetId());
        if (target == null) {
            out.add(new Mismatch(d.targetId(), d.chatId(), "delete", "the deleted message is not in history"));
        }
        else if (!target.deleted() || !target.body().isEmpty()) {
            out.add(new Mismatch(d.targetId(), d.chatId(), "delete", "history shows it with deleted=" + target.deleted()
                    + " and a body of " + target.body().length() + " chars"));
        }
        Shown single = fetched.get(d.targetId());
        if (single == null) {
            out.add(new Mismatch(d.targetId(), d.chatId(), "delete", "GET of the message did not answer it"));
        }
        else if (!single.deleted() || !single.body().isEmpty()) {
            out.add(new Mismatch(d.targetId(), d.chatId(), "delete", "GET of the message shows deleted=" + single.deleted()
                    + " and a body of " + single.body().length() + " chars"));
        }
        for (Shown s : history) {
            if ("edit".equals(s.kind()) && d.targetId().equals(s.targetId()) && !s.body().isEmpty()) {
                out.add(new Mismatch(s.messageId(), d.chatId(), "delete", "an edit of deleted " + d.targetId() + " still has its text"));
            }
        }
    }

    private static void checkEdits(Shown target, List<Entry> entries, List<Entry> accepted, Map<String, Shown> shownById,
                                   List<Mismatch> out) {
        Entry last = null;
        for (Entry e : entries) {
            if (e.kind().equals("edit")) {
                last = e;
            }
        }
        if (last == null) {
            return;
        }
        if (!Objects.equals(target.body(), last.body())) {
            out.add(new Mismatch(target.messageId(), target.chatId(), "edit", "body is not that of its last edit " + last.messageId()
                    + " (seq " + last.seq() + ")"));
        }
        if (!target.edited()) {
            out.add(new Mismatch(target.messageId(), target.chatId(), "edit", "edited, and shows no editedAt"));
        }
        for (Entry e : accepted) {
            if (e.kind().equals("edit") && e.targetId().equals(target.messageId())) {
                Shown s = shownById.get(e.messageId());
                if (s != null && !Objects.equals(s.body(), e.body())) {
                    out.add(new Mismatch(e.messageId(), e.chatId(), "edit", "the edit entry's body is not the one sent"));
                }
            }
        }
    }

    private static void checkReactions(Shown target, List<Entry> entries, String reader, List<Mismatch> out) {
        // the last reaction entry by seq of each (user, emoji) decides whether it is on
        Map<String, Map<String, Boolean>> byUser = new HashMap<>();
        boolean any = false;
        for (Entry e : entries) {
            if (e.kind().equals("reaction")) {
                any = true;
                byUser.computeIfAbsent(e.senderId(), k -> new HashMap<>()).put(e.emoji(), e.on());
            }
        }
        if (!any && target.reactions().isEmpty()) {
            return;
        }
        Map<String, Integer> expected = new TreeMap<>();
        byUser.values().forEach(m -> m.forEach((emoji, on) -> {
            if (on) {
                expected.merge(emoji, 1, Integer::sum);
            }
        }));
        Map<String, Integer> shown = new TreeMap<>();
        target.reactions().forEach((emoji, n) -> {
            if (n != 0) {
                shown.put(emoji, n);
            }
        });
        if (!expected.equals(shown)) {
            out.add(new Mismatch(target.messageId(), target.chatId(), "reaction", "counts " + shown + ", accepted entries give " + expected));
        }
        if (reader != null) {
            Set<String> mine = new TreeSet<>();
            byUser.getOrDefault(reader, Map.of()).forEach((emoji, on) -> {
                if (on) {
                    mine.add(emoji);
                }
            });
            if (!mine.equals(new TreeSet<>(target.myReactions()))) {
                out.add(new Mismatch(target.messageId(), target.chatId(), "reaction", "myReactions of " + reader + " "
                        + new TreeSet<>(target.myReactions()) + ", its entries give " + mine));
            }
        }
    }
}
