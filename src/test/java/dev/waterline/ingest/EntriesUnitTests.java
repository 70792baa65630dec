package dev.waterline.ingest;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The rules of §9's entries within one batch, where each decision sees the ones before it. */
class EntriesUnitTests {

    static final SendReply NOBODY = new SendReply() {
        @Override
        public void accepted(String messageId, String chatId, long seq, String sentAt) {
        }

        @Override
        public void rejected(String code, String message) {
        }
    };

    static final Entries.Target HELLO = new Entries.Target("m-1", "chat", 1, "text", "alice", "t1", null);
    static final Entries.Target OPENING = new Entries.Target("m-2", "chat", 2, "stream", "alice", "t2", null);
    static final Entries.Target ELSEWHERE = new Entries.Target("m-3", "other", 1, "text", "alice", "t3", null);

    static Entries entries(Map<String, Set<String>> reactions, Map<String, List<String>> edits, int max) {
        return entries(reactions, Map.of(), edits, max, 50);
    }

    static Entries entries(Map<String, Set<String>> reactions, Map<String, Set<String>> emoji, Map<String, List<String>> edits,
                           int max, int distinct) {
        Map<String, Entries.Target> targets = new HashMap<>();
        for (Entries.Target t : List.of(HELLO, OPENING, ELSEWHERE)) {
            targets.put(t.messageId(), t);
        }
        Entries.Attachment file = new Entries.Attachment("a-1", "chat", "alice", true, "image/png", 10, "x.png", "ab");
        return new Entries(new Entries.Known(targets, reactions, emoji, Map.of("a-1", file), edits), max, distinct);
    }

    static Entries.Decision decideAndMake(Entries e, SendRequest s, long seq) {
        Entries.Decision d = e.decide(s);
        if (d instanceof Entries.Make) {
            e.made(s, seq, "new-" + seq, "t" + seq);
        }
        return d;
    }

    @Test
    void anEditOfThisBatchWhoseMessageALaterDeleteErasesIsErasedWithTheEditsBefore() {
        Entries e = entries(Map.of(), Map.of("m-1", List.of("old-edit")), 20);
        assertThat(decideAndMake(e, SendRequest.edit("alice", "c1", "chat", "m-1", "v2", NOBODY), 5)).isInstanceOf(Entries.Make.class);
        assertThat(decideAndMake(e, SendRequest.delete("alice", "c2", "chat", "m-1", NOBODY), 6)).isInstanceOf(Entries.Make.class);

        assertThat(e.erased()).containsExactlyInAnyOrder("m-1", "old-edit", "new-5");
        assertThat(e.edits()).as("no new text is written for an erased message").isEmpty();
        assertThat(e.erasures()).containsExactly(new Entries.Erasure("chat", 1, "m-1", 6));
        assertThat(decideAndMake(e, SendRequest.edit("alice", "c3", "chat", "m-1", "v3", NOBODY), 7))
                .isEqualTo(new Entries.Refuse("not_found", "the message was deleted"));
        assertThat(decideAndMake(e, SendRequest.delete("alice", "c4", "chat", "m-1", NOBODY), 8))
                .isEqualTo(new Entries.AlreadyDeleted("chat", new Entries.Deletion("new-6", 6, "t6")));
    }

    @Test
    void aReactionPutOnTwiceInABatchIsOneEntryAndOnThenOffLeavesNothingToWrite() {
        Entries e = entries(Map.of(), Map.of(), 20);
        assertThat(decideAndMake(e, SendRequest.react("bob", "r1", "chat", "m-1", "👍", true, NOBODY), 5)).isInstanceOf(Entries.Make.class);
        assertThat(decideAndMake(e, SendRequest.react("bob", "r2", "chat", "m-1", "👍", true, NOBODY), 6))
                .isEqualTo(new Entries.Unchanged(HELLO));
        assertThat(e.reactionsOn()).containsExactly(new Entries.Reaction("chat", 1, "bob", "👍", 5));
        assertThat(decideAndMake(e, SendRequest.react("bob", "r3", "chat", "m-1", "👍", false, NOBODY), 7)).isInstanceOf(Entries.Make.class);
        assertThat(e.reactionsOn()).isEmpty();
        assertThat(e.reactionsOff()).as("it was not on before the batch").isEmpty();
    }

    @Test
    void aReactionOnBeforeTheBatchAndTakenBackIsDeletedAndTheLimitCountsWhatIsOn() {
        Entries e = entries(Map.of(Entries.pair("m-1", "bob"), Set.of("a", "b")), Map.of(), 2);
        assertThat(decideAndMake(e, SendRequest.react("bob", "r1", "chat", "m-1", "c", true, NOBODY), 5))
                .isEqualTo(new Entries.Refuse("invalid", "at most 2 different reactions per user on one message"));
        assertThat(decideAndMake(e, SendRequest.react("bob", "r2", "chat", "m-1", "a", false, NOBODY), 6)).isInstanceOf(Entries.Make.class);
        assertThat(decideAndMake(e, SendRequest.react("bob", "r3", "chat", "m-1", "c", true, NOBODY), 7)).isInstanceOf(Entries.Make.class);
        assertThat(e.reactionsOff()).containsExactly(new Entries.Reaction("chat", 1, "bob", "a", 0));
        assertThat(e.reactionsOn()).containsExactly(new Entries.Reaction("chat", 1, "bob", "c", 7));
    }

    @Test
    void aMessageCarriesAtMostTheDistinctEmojiAllowedButAnEmojiAlreadyOnItMayBeAddedByAnother() {
        Entries e = entries(Map.of(), Map.of("m-1", Set.of("a", "b")), Map.of(), 20, 3);
        assertThat(decideAndMake(e, SendRequest.react("bob", "r1", "chat", "m-1", "c", true, NOBODY), 5)).isInstanceOf(Entries.Make.class);
        assertThat(decideAndMake(e, SendRequest.react("carol", "r2", "chat", "m-1", "d", true, NOBODY), 6))
                .isEqualTo(new Entries.Refuse("invalid", "at most 3 different reactions on one message"));
        assertThat(decideAndMake(e, SendRequest.react("carol", "r3", "chat", "m-1", "a", true, NOBODY), 7)).isInstanceOf(Entries.Make.class);
    }

    @Test
    void aStrangersDeleteOfADeletedMessageIsForbiddenNotTheFirstDeletesAnswer() {
        Entries e = entries(Map.of(), Map.of(), 20);
        assertThat(decideAndMake(e, SendRequest.delete("alice", "d1", "chat", "m-1", NOBODY), 5)).isInstanceOf(Entries.Make.class);
        assertThat(e.decide(SendRequest.delete("bob", "d2", "chat", "m-1", NOBODY))).extracting("code").isEqualTo("forbidden");
    }

    @Test
    void onlyTextOfTheSameChatMayBeChangedAndOnlyBySender() {
        Entries e = entries(Map.of(), Map.of(), 20);
        assertThat(e.decide(SendRequest.edit("bob", "c", "chat", "m-1", "x", NOBODY))).extracting("code").isEqualTo("forbidden");
        assertThat(e.decide(SendRequest.delete("bob", "c", "chat", "m-1", NOBODY))).extracting("code").isEqualTo("forbidden");
        assertThat(e.decide(SendRequest.edit("alice", "c", "chat", "m-2", "x", NOBODY))).extracting("code").isEqualTo("invalid");
        assertThat(e.decide(SendRequest.edit("alice", "c", "chat", "m-3", "x", NOBODY))).extracting("code").isEqualTo("not_found");
        assertThat(e.decide(SendRequest.react("alice", "c", "chat", "nope", "x", true, NOBODY))).extracting("code").isEqualTo("not_found");
    }

    @Test
    void aFileIsSentOnceWithItsDescriptionAndOnlyByItsUploaderInItsChat() {
        Entries e = entries(Map.of(), Map.of(), 20);
        SendRequest send = SendRequest.text("alice", "c1", "chat", "", "m-1", List.of("a-1"), NOBODY);
        Entries.Decision d = decideAndMake(e, send, 5);
        assertThat(d).isInstanceOf(Entries.Make.class);
        assertThat(((Entries.Make) d).fields()).contains("\"replyTo\":\"m-1\"", "\"attachments\":[\"a-1\"]", "\"contentType\":\"image/png\"");
        assertThat(e.links()).containsExactly(new Entries.Link("a-1", 5, 0));
        assertThat(e.decide(SendRequest.text("alice", "c2", "chat", "", null, List.of("a-1"), NOBODY))).extracting("code")
                .as("sent already, in this batch").isEqualTo("not_found");
        assertThat(entries(Map.of(), Map.of(), 20).decide(SendRequest.text("bob", "c3", "chat", "", null, List.of("a-1"), NOBODY)))
                .extracting("code").isEqualTo("not_found");
        assertThat(e.decide(SendRequest.text("alice", "c4", "chat", "x", "m-3", List.of(), NOBODY))).extracting("code")
                .as("a reply to another chat's message").isEqualTo("not_found");
    }
}
