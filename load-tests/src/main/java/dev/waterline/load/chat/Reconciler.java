package dev.waterline.load.chat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The proof that nothing was lost. Every accepted message must be in its chat's history (G1:
 * durable acceptance), and in the live-plus-synced set of every recipient after a final resync
 * (G3: recovery). Pure logic: the run collects the sets, this class judges them.
 */
public final class Reconciler {

    /** A message the server answered {@code accepted} for, and who should end up holding it. */
    public record Accepted(String messageId, String chatId, String senderId, List<String> recipients) {
    }

    /** One loss: the message, whose set lacks it ("history" for G1), and which guarantee broke. */
    public record Loss(String messageId, String chatId, String missingFrom, String guarantee) {
    }

    public record Verdict(int accepted, int expectedDeliveries, List<Loss> lost, long duplicatesSeen) {
        public boolean clean() {
            return lost.isEmpty();
        }
    }

    private Reconciler() {
    }

    /**
     * @param accepted every accepted message
     * @param historyByChat message ids found in each chat's history after the run
     * @param heldByUser message ids each user holds (received live or synced)
     * @param receivedCounts how many times each user received each message (live + sync), for duplicates
     */
    public static Verdict reconcile(List<Accepted> accepted, Map<String, Set<String>> historyByChat,
                                    Map<String, Set<String>> heldByUser, Map<String, Map<String, Integer>> receivedCounts) {
        List<Loss> lost = new ArrayList<>();
        int expected = 0;
        for (Accepted a : accepted) {
            if (!historyByChat.getOrDefault(a.chatId(), Set.of()).contains(a.messageId())) {
                lost.add(new Loss(a.messageId(), a.chatId(), "history", "G1"));
            }
            for (String r : a.recipients()) {
                expected++;
                if (!heldByUser.getOrDefault(r, Set.of()).contains(a.messageId())) {
                    lost.add(new Loss(a.messageId(), a.chatId(), r, "G3"));
                }
            }
        }
        long duplicates = 0;
        for (Map<String, Integer> counts : receivedCounts.values()) {
            for (int n : counts.values()) {
                if (n > 1) {
                    duplicates += n - 1;
                }
            }
        }
        return new Verdict(accepted.size(), expected, lost, duplicates);
    }
}
