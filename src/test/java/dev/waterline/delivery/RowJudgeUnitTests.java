package dev.waterline.delivery;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.waterline.commit.ChatMessage;
import dev.waterline.delivery.RowJudge.Place;
import dev.waterline.delivery.RowJudge.Verdict;
import dev.waterline.outbox.OutboxRow;
import dev.waterline.presence.Location;
import dev.waterline.reaper.AttemptsReaper;
import dev.waterline.session.ClientSession;
import dev.waterline.watermark.WatermarkIndex.Statuses;
import org.junit.jupiter.api.Test;

import static dev.waterline.watermark.WatermarkIndex.RowStatus.NEITHER;
import static dev.waterline.watermark.WatermarkIndex.RowStatus.OWED;
import static dev.waterline.watermark.WatermarkIndex.RowStatus.PENDING;
import static org.assertj.core.api.Assertions.assertThat;

class RowJudgeUnitTests {

    final AttemptsReaper.Verdict attempts = new AttemptsReaper.Verdict(3);
    final Place here = new Place.Here(new Session("bob", "s-1"));
    final Place elsewhere = new Place.Elsewhere(new Location("bob", "node-two", "s-2"));

    @Test
    void rowsOfARecipientConnectedNowhereAreAllRetired() {
        Verdict v = RowJudge.judge(new Place.Nowhere(), List.of(row(1, 0), row(2, 5)), new Statuses.Unknown(), attempts);

        assertThat(v).isInstanceOfSatisfying(Verdict.RetireAll.class, r -> assertThat(r.ids()).containsExactly(1, 2));
    }

    @Test
    void rowsOfARecipientWhoseWhereaboutsAreUnknownAreLeftToTheirLease() {
        assertThat(RowJudge.judge(new Place.Unknown(), List.of(row(1, 0)), new Statuses.Known(List.of(OWED)), attempts)).isInstanceOf(Verdict.Leave.class);
    }

    @Test
    void anIndexNotKnownToBeWholeLeavesTheRowsOfAConnectedRecipientLeased() {
        assertThat(RowJudge.judge(here, List.of(row(1, 0)), new Statuses.Unknown(), attempts)).isInstanceOf(Verdict.Leave.class);
        assertThat(RowJudge.judge(elsewhere, List.of(row(1, 0)), new Statuses.Unknown(), attempts)).isInstanceOf(Verdict.Leave.class);
    }

    @Test
    void aConnectionRedisDoesNotNameAsTheEpochGetsNothing() {
        assertThat(RowJudge.judge(here, List.of(row(1, 0)), new Statuses.NotTheEpoch(), attempts)).isInstanceOf(Verdict.NotTheEpoch.class);
    }

    @Test
    void owedRowsAreWrittenPendingOnesAgainAndTheRestRetired() {
        OutboxRow owed = row(1, 0);
        OutboxRow pending = row(2, 1);
        OutboxRow done = row(3, 0);

        Verdict v = RowJudge.judge(here, List.of(owed, pending, done), new Statuses.Known(List.of(OWED, PENDING, NEITHER)), attempts);

        assertThat(v).isInstanceOfSatisfying(Verdict.Send.class, s -> {
            assertThat(s.owed()).containsExactly(owed);
            assertThat(s.again()).containsExactly(pending);
            assertThat(s.retire()).containsExactly(3);
        });
    }

    @Test
    void aPendingRowReSentMaxDeliveryAttemptsTimesWithdrawsTheRecipientAndStillRetiresWhatIsDone() {
        Verdict v = RowJudge.judge(elsewhere, List.of(row(1, 0), row(2, 3), row(3, 0)), new Statuses.Known(List.of(OWED, PENDING, NEITHER)), attempts);

        assertThat(v).isInstanceOfSatisfying(Verdict.Withdraw.class, w -> assertThat(w.retire()).containsExactly(3));
    }

    @Test
    void anOwedRowWithManyAttemptsWithdrawsNoOne() {
        // only re-sends of a written row count: an owed row was never written to this connection
        Verdict v = RowJudge.judge(here, List.of(row(1, 9)), new Statuses.Known(List.of(OWED)), attempts);

        assertThat(v).isInstanceOf(Verdict.Send.class);
    }

    @Test
    void aUserRedisPlacesOnThisNodeWithoutAConnectionHereIsAGhostAndThenConnectedNowhere() {
        Map<String, Location> located = new LinkedHashMap<>();
        located.put("carol", new Location("carol", "node-one", "s-9"));
        located.put("dave", new Location("dave", "node-two", "s-3"));

        RowJudge.Located where = RowJudge.Located.of(Optional.of(located), "node-one");

        assertThat(where.ghosts()).containsExactly("carol");
        assertThat(where.place("carol", null)).isInstanceOf(Place.Nowhere.class);
        assertThat(where.place("dave", null)).isEqualTo(new Place.Elsewhere(new Location("dave", "node-two", "s-3")));
        assertThat(where.place("erin", null)).isInstanceOf(Place.Nowhere.class);
    }

    @Test
    void withoutRedisWordThatTheIndexIsWholeARecipientNotHereIsUnknownNotNowhere() {
        RowJudge.Located where = RowJudge.Located.of(Optional.empty(), "node-one");

        assertThat(where.place("carol", null)).isInstanceOf(Place.Unknown.class);
        assertThat(where.ghosts()).isEmpty();
    }

    @Test
    void aConnectionHereWinsOverWhatRedisSaid() {
        Session bob = new Session("bob", "s-1");
        RowJudge.Located where = RowJudge.Located.of(Optional.of(Map.of("bob", new Location("bob", "node-two", "s-2"))), "node-one");

        assertThat(where.place("bob", bob)).isEqualTo(new Place.Here(bob));
    }

    @Test
    void rowsAreGroupedByRecipientInClaimOrder() {
        OutboxRow a1 = row(1, 0, "alice");
        OutboxRow b1 = row(2, 0, "bob");
        OutboxRow a2 = row(3, 0, "alice");

        assertThat(RowJudge.byRecipient(List.of(a1, b1, a2)))
                .containsExactly(Map.entry("alice", List.of(a1, a2)), Map.entry("bob", List.of(b1)));
    }

    static OutboxRow row(long id, int attempts) {
        return row(id, attempts, "bob");
    }

    static OutboxRow row(long id, int attempts, String recipient) {
        return new OutboxRow(id, recipient, new ChatMessage("chat", id, "m-" + id, "alice", null, "hi", "message", null),
                "2026-12-04T00:00:00Z", 0, attempts);
    }

    record Session(String userId, String sessionId) implements ClientSession {

        public boolean isOpen() {
            return true;
        }

        public boolean send(String frame) {
            return true;
        }

        public long openedNanos() {
            return 0;
        }

        public long lastReceivedNanos() {
            return 0;
        }

        public long tokenGoodUntilMillis() {
            return Long.MAX_VALUE;
        }

        public boolean admitSend() {
            return true;
        }

        public void answered() {
        }

        public boolean admitRate() {
            return true;
        }

        public void close(int code, String reason) {
        }
    }
}
