package dev.waterline.load.chat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.waterline.load.chat.EntryReconciler.Entry;
import dev.waterline.load.chat.EntryReconciler.Mismatch;
import dev.waterline.load.chat.EntryReconciler.Shown;
import dev.waterline.load.clients.SimClient;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/** The rules an accepted edit, delete or reaction is held to after a run (PROTOCOL.md §9). */
class EntryReconcilerUnitTests {

    static final String CHAT = "c1";

    static Shown text(String id, long seq, String sender, String body) {
        return Shown.text(id, CHAT, seq, sender, body);
    }

    static Shown edit(String id, long seq, String sender, String target, String body) {
        return new Shown(id, CHAT, seq, "edit", sender, body, false, false, target, null, false, Map.of(), Set.of());
    }

    static Shown delete(String id, long seq, String sender, String target) {
        return new Shown(id, CHAT, seq, "delete", sender, "", false, false, target, null, false, Map.of(), Set.of());
    }

    static Shown reaction(String id, long seq, String sender, String target, String emoji, boolean on) {
        return new Shown(id, CHAT, seq, "reaction", sender, "", false, false, target, emoji, on, Map.of(), Set.of());
    }

    static List<Mismatch> judge(List<Entry> accepted, List<Shown> history, Map<String, Shown> fetched) {
        return EntryReconciler.reconcile(accepted, Map.of(CHAT, history), Map.of(CHAT, "alice"), fetched);
    }

    @Test
    void aDeleteWhoseTextIsGoneFromHistoryTheSingleGetAndItsEditsIsReconciled() {
        Shown gone = text("m1", 1, "alice", "").withState("", true, true, Map.of(), Set.of());
        List<Shown> history = List.of(gone, edit("e1", 2, "alice", "m1", ""), delete("d1", 3, "alice", "m1"));
        List<Entry> accepted = List.of(Entry.edit("e1", CHAT, "alice", 2, "m1", "edit one"), Entry.delete("d1", CHAT, "alice", 3, "m1"));

        assertThat(judge(accepted, history, Map.of("m1", gone))).isEmpty();
    }

    @Test
    void aDeletedMessageWhoseTextRemainsAnywhereIsAMismatchForEachPlace() {
        Shown stillThere = text("m1", 1, "alice", "secret");
        List<Shown> history = List.of(stillThere, edit("e1", 2, "alice", "m1", "still secret"), delete("d1", 3, "alice", "m1"));
        List<Entry> accepted = List.of(Entry.edit("e1", CHAT, "alice", 2, "m1", "still secret"), Entry.delete("d1", CHAT, "alice", 3, "m1"));

        List<Mismatch> found = judge(accepted, history, Map.of("m1", stillThere));

        assertThat(found).extracting(Mismatch::messageId).containsExactly("m1", "m1", "e1");
        assertThat(found).extracting(Mismatch::rule).containsOnly("delete");
        assertThat(found.get(0).detail()).startsWith("history shows it with deleted=false");
        assertThat(found.get(1).detail()).startsWith("GET of the message shows");
    }

    @Test
    void aDeleteMarkedDeletedButKeepingItsBodyIsNotGone() {
        Shown marked = text("m1", 1, "alice", "").withState("secret", true, false, Map.of(), Set.of());
        List<Mismatch> found = judge(List.of(Entry.delete("d1", CHAT, "alice", 2, "m1")),
                List.of(marked, delete("d1", 2, "alice", "m1")), Map.of("m1", text("m1", 1, "alice", "").withState("", true, false, Map.of(), Set.of())));

        assertThat(found).singleElement().satisfies(m -> assertThat(m.detail()).contains("deleted=true and a body of 6 chars"));
    }

    @Test
    void aDeletedMessageTheSingleGetDidNotAnswerIsAMismatch() {
        Shown gone = text("m1", 1, "alice", "").withState("", true, false, Map.of(), Set.of());
        List<Mismatch> found = judge(List.of(Entry.delete("d1", CHAT, "alice", 2, "m1")), List.of(gone, delete("d1", 2, "alice", "m1")), Map.of());

        assertThat(found).singleElement().extracting(Mismatch::detail).isEqualTo("GET of the message did not answer it");
    }

    @Test
    void theCurrentBodyIsTheLastAcceptedEditsBySeqWhateverOrderTheAnswersCameIn() {
        Shown current = text("m1", 1, "alice", "").withState("second", false, true, Map.of(), Set.of());
        List<Shown> history = List.of(current, edit("e1", 2, "alice", "m1", "first"), edit("e2", 5, "alice", "m1", "second"));
        // answers listed out of seq order, as they may be collected
        List<Entry> accepted = List.of(Entry.edit("e2", CHAT, "alice", 5, "m1", "second"), Entry.edit("e1", CHAT, "alice", 2, "m1", "first"));

        assertThat(judge(accepted, history, Map.of())).isEmpty();
    }

    @Test
    void aBodyFromAnEarlierEditIsAMismatch() {
        Shown stale = text("m1", 1, "alice", "").withState("first", false, true, Map.of(), Set.of());
        List<Shown> history = List.of(stale, edit("e1", 2, "alice", "m1", "first"), edit("e2", 5, "alice", "m1", "second"));
        List<Entry> accepted = List.of(Entry.edit("e1", CHAT, "alice", 2, "m1", "first"), Entry.edit("e2", CHAT, "alice", 5, "m1", "second"));

        assertThat(judge(accepted, history, Map.of())).singleElement()
                .satisfies(m -> assertThat(m.detail()).contains("last edit e2 (seq 5)"));
    }

    @Test
    void anEditedMessageWithoutEditedAtOrAnEditEntryWithAnotherBodyIsAMismatch() {
        Shown unmarked = text("m1", 1, "alice", "").withState("new", false, false, Map.of(), Set.of());
        List<Mismatch> found = judge(List.of(Entry.edit("e1", CHAT, "alice", 2, "m1", "new")),
                List.of(unmarked, edit("e1", 2, "alice", "m1", "other")), Map.of());

        assertThat(found).extracting(Mismatch::detail)
                .containsExactly("edited, and shows no editedAt", "the edit entry's body is not the one sent");
    }

    @Test
    void anEditCommittedWhoseAnswerNeverCameStillCountsAsTheLast() {
        // e2 is in history but its sender never had its answer: the message shows its body, rightly
        Shown current = text("m1", 1, "alice", "").withState("late", false, true, Map.of(), Set.of());
        List<Shown> history = List.of(current, edit("e1", 2, "alice", "m1", "first"), edit("e2", 3, "alice", "m1", "late"));

        assertThat(judge(List.of(Entry.edit("e1", CHAT, "alice", 2, "m1", "first")), history, Map.of())).isEmpty();
    }

    @Test
    void reactionCountsAreTheUsersWhoseLastEntryPutTheEmojiOn() {
        Shown m = text("m1", 1, "bob", "hi").withState("hi", false, false, Map.of("👍", 1, "🎉", 1), Set.of("🎉"));
        List<Entry> accepted = List.of(
                Entry.reaction("r1", CHAT, "alice", 2, "m1", "👍", true),
                Entry.reaction("r2", CHAT, "carol", 3, "m1", "👍", true),
                Entry.reaction("r3", CHAT, "alice", 4, "m1", "👍", false),
                Entry.reaction("r4", CHAT, "alice", 5, "m1", "🎉", true));
        List<Shown> history = new ArrayList<>(List.of(m));
        accepted.forEach(e -> history.add(reaction(e.messageId(), e.seq(), e.senderId(), "m1", e.emoji(), e.on())));

        assertThat(judge(accepted, history, Map.of())).isEmpty();
    }

    @Test
    void aCountThatDisagreesOrAnotherUsersReactionShownAsMineIsAMismatch() {
        Shown m = text("m1", 1, "bob", "hi").withState("hi", false, false, Map.of("👍", 2), Set.of("👍"));
        List<Entry> accepted = List.of(Entry.reaction("r1", CHAT, "carol", 2, "m1", "👍", true));
        List<Shown> history = List.of(m, reaction("r1", 2, "carol", "m1", "👍", true));

        List<Mismatch> found = judge(accepted, history, Map.of());

        assertThat(found).extracting(Mismatch::rule).containsExactly("reaction", "reaction");
        assertThat(found.get(0).detail()).isEqualTo("counts {👍=2}, accepted entries give {👍=1}");
        assertThat(found.get(1).detail()).startsWith("myReactions of alice [👍]");
    }

    @Test
    void aReactionToADeletedMessageIsNotCountedAgainstIt() {
        Shown gone = text("m1", 1, "bob", "").withState("", true, false, Map.of(), Set.of());
        List<Entry> accepted = List.of(Entry.reaction("r1", CHAT, "alice", 2, "m1", "👍", true), Entry.delete("d1", CHAT, "bob", 3, "m1"));
        List<Shown> history = List.of(gone, reaction("r1", 2, "alice", "m1", "👍", true), delete("d1", 3, "bob", "m1"));

        assertThat(judge(accepted, history, Map.of("m1", gone))).isEmpty();
    }

    @Test
    void theTargetOfAnAcceptedEntryMissingFromHistoryIsAMismatch() {
        assertThat(judge(List.of(Entry.edit("e1", CHAT, "alice", 2, "m9", "x")), List.of(), Map.of()))
                .singleElement().extracting(Mismatch::detail).isEqualTo("the target of accepted entries is not in history");
    }

    @Test
    void aHistoryEntryReadsItsCurrentStateFromThePage() throws Exception {
        var json = JsonMapper.builder().build().readTree("""
                {"messageId":"m1","correlationId":"a-1","chatId":"c1","seq":7,"senderId":"bob","body":"new","sentAt":"t",
                 "kind":"text","editedAt":"t2","reactions":{"👍":3},"myReactions":["👍"]}""");
        Shown s = Shown.of(json);
        assertThat(s).isEqualTo(new Shown("m1", "c1", 7, "text", "bob", "new", false, true, null, null, false, Map.of("👍", 3), Set.of("👍")));

        Shown plain = Shown.of(JsonMapper.builder().build().readTree("""
                {"messageId":"m2","chatId":"c1","seq":8,"senderId":"bob","body":"x","sentAt":"t"}"""));
        assertThat(plain.kind()).isEqualTo("text");
        assertThat(plain.edited()).isFalse();
        assertThat(plain.reactions()).isEmpty();
    }

    @Test
    void theMixDrawsDeletesThenEditsThenReactionsAndMessagesForTheRest() {
        assertThat(LoadRun.entryKindOf(0.005, 0.10, 0.01)).isEqualTo(SimClient.EntryKind.DELETE);
        assertThat(LoadRun.entryKindOf(0.02, 0.10, 0.01)).isEqualTo(SimClient.EntryKind.EDIT);
        assertThat(LoadRun.entryKindOf(0.07, 0.10, 0.01)).isEqualTo(SimClient.EntryKind.REACT);
        assertThat(LoadRun.entryKindOf(0.11, 0.10, 0.01)).isNull();
        assertThat(LoadRun.entryKindOf(0.0, 0, 0)).isNull();
        long edits = 0, reacts = 0;
        java.util.Random r = new java.util.Random(1);
        for (int i = 0; i < 100_000; i++) {
            SimClient.EntryKind k = LoadRun.entryKindOf(r.nextDouble(), 0.10, 0);
            edits += k == SimClient.EntryKind.EDIT ? 1 : 0;
            reacts += k == SimClient.EntryKind.REACT ? 1 : 0;
        }
        assertThat(edits).isBetween(4_700L, 5_300L);
        assertThat(reacts).isBetween(4_700L, 5_300L);
    }
}
