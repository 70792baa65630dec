package dev.waterline.ingest;

import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** What one group commit writes for the chat list (V14), from the counts read under the chat locks. */
class ChatListCountsUnitTests {

    @Test
    void eachRowCarriesItsChatsRunningCountOfTextAndStreamEntriesOnly() {
        ChatListCounts counts = new ChatListCounts(Map.of("a", 10L, "b", 0L));

        long[] rows = {
                counts.add("a", "alice", 21, "text"),
                counts.add("b", "bob", 1, "stream"),
                counts.add("a", "bob", 22, "edit"),
                counts.add("a", "bob", 23, "reaction"),
                counts.add("a", "alice", 24, "delete"),
                counts.add("a", "bob", 25, "text"),
                counts.add("b", "bob", 2, "member")};

        assertThat(rows).containsExactly(11, 1, 11, 11, 11, 12, 1);
        assertThat(counts.countedIn(new String[] {"a", "b"})).containsExactly(2, 1);
        assertThat(counts.lastMessageSeqs(new String[] {"a", "b"})).containsExactly(25L, 1L);
    }

    @Test
    void aChatWithoutATextOrStreamEntryInTheBatchKeepsItsLastMessage() {
        ChatListCounts counts = new ChatListCounts(Map.of("a", 3L));

        assertThat(counts.add("a", "alice", 7, "reaction")).isEqualTo(3);

        assertThat(counts.countedIn(new String[] {"a"})).containsExactly(0);
        assertThat(counts.lastMessageSeqs(new String[] {"a"})).containsExactly((Long) null);
        assertThat(counts.ownEntries().chatIds()).isEmpty();
    }

    @Test
    void eachSendersLastOwnTextOrStreamEntryPerChatIsKeptOnceInChatAndUserOrder() {
        ChatListCounts counts = new ChatListCounts(Map.of("a", 0L, "b", 0L));
        counts.add("b", "carol", 1, "text");
        counts.add("a", "bob", 1, "text");
        counts.add("a", "alice", 2, "text");
        counts.add("a", "bob", 3, "text");
        counts.add("a", "alice", 4, "edit");

        ChatListCounts.OwnEntries own = counts.ownEntries();

        assertThat(own.chatIds()).containsExactly("a", "a", "b");
        assertThat(own.userIds()).containsExactly("alice", "bob", "carol");
        assertThat(own.seqs()).containsExactly(2, 3, 1);
    }
}
