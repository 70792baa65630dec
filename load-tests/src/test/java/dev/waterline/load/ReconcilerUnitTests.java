package dev.waterline.load;

import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ReconcilerUnitTests {

    static final List<Reconciler.Accepted> ACCEPTED = List.of(
            new Reconciler.Accepted("m1", "c1", "alice", List.of("bob")),
            new Reconciler.Accepted("m2", "c1", "bob", List.of("alice")),
            new Reconciler.Accepted("m3", "g1", "alice", List.of("bob", "carol")));

    @Test
    void aRunWhereEveryoneHoldsEverythingOnceIsClean() {
        Reconciler.Verdict v = Reconciler.reconcile(ACCEPTED,
                Map.of("c1", Set.of("m1", "m2"), "g1", Set.of("m3")),
                Map.of("alice", Set.of("m2"), "bob", Set.of("m1", "m3"), "carol", Set.of("m3")),
                Map.of("bob", Map.of("m1", 1, "m3", 1)));
        assertThat(v.clean()).isTrue();
        assertThat(v.expectedDeliveries()).isEqualTo(4);
        assertThat(v.duplicatesSeen()).isZero();
    }

    @Test
    void aMessageARecipientNeverGotIsALossOfG3() {
        Reconciler.Verdict v = Reconciler.reconcile(ACCEPTED,
                Map.of("c1", Set.of("m1", "m2"), "g1", Set.of("m3")),
                Map.of("alice", Set.of("m2"), "bob", Set.of("m1", "m3"), "carol", Set.of()),
                Map.of());
        assertThat(v.lost()).containsExactly(new Reconciler.Loss("m3", "g1", "carol", "G3"));
    }

    @Test
    void anAcceptedMessageMissingFromHistoryIsALossOfG1EvenIfDelivered() {
        Reconciler.Verdict v = Reconciler.reconcile(ACCEPTED,
                Map.of("c1", Set.of("m2"), "g1", Set.of("m3")),
                Map.of("alice", Set.of("m2"), "bob", Set.of("m1", "m3"), "carol", Set.of("m3")),
                Map.of());
        assertThat(v.lost()).containsExactly(new Reconciler.Loss("m1", "c1", "history", "G1"));
    }

    @Test
    void aMessageReceivedTwiceCountsOneDuplicateAndIsNoLoss() {
        Reconciler.Verdict v = Reconciler.reconcile(ACCEPTED,
                Map.of("c1", Set.of("m1", "m2"), "g1", Set.of("m3")),
                Map.of("alice", Set.of("m2"), "bob", Set.of("m1", "m3"), "carol", Set.of("m3")),
                Map.of("bob", Map.of("m1", 2, "m3", 1), "carol", Map.of("m3", 3)));
        assertThat(v.clean()).isTrue();
        assertThat(v.duplicatesSeen()).isEqualTo(3);
    }
}
