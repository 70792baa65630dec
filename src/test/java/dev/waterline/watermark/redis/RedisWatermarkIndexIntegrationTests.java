package dev.waterline.watermark.redis;

import java.util.List;
import java.util.Optional;

import dev.waterline.support.RecordingSession;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.watermark.WatermarkIndex;
import dev.waterline.watermark.WatermarkIndex.EpochClaim;
import dev.waterline.watermark.WatermarkIndex.SessionLocation;
import dev.waterline.watermark.WatermarkIndex.Statuses;
import dev.waterline.watermark.WatermarkKeys;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Lua scripts of the watermark index against a real Redis. Shares the reclaim tests' context,
 * where the GC loop is off: a rebuild would drop these tests' connections, which no registry knows.
 */
@WaterlineIntegrationTest
@TestPropertySource(properties = {
        "waterline.reclaim.enabled=false",
        "waterline.reclaim.grace=5s",
        "waterline.embedded.database=reclaim",
        "spring.data.redis.database=7"})
class RedisWatermarkIndexIntegrationTests {

    static final String NODE = "local";

    @Autowired
    WatermarkIndex index;

    @Autowired
    StringRedisTemplate redis;

    @Test
    void aScriptToldAnotherNodeThanTheUsersChangesNothingAndAnswersMovedWhileTheAdapterReadsAgain() {
        RecordingSession s = new RecordingSession("wm-moved", "m1");
        index.connect(s, "node-m");
        index.deliver(s, new long[] {70});
        String user = s.userId();
        List<String> keys = List.of(WatermarkKeys.sessionKey(user), WatermarkKeys.pendingKey(user), WatermarkKeys.owedKey(user),
                WatermarkKeys.nodeKey(user), WatermarkKeys.COUNTS, WatermarkKeys.PINS, WatermarkKeys.nodeUsersKey("node-x"));

        Long r = redis.execute(RedisScript.of(new ClassPathResource("watermark/disconnect.lua"), Long.class), keys, "m1", user, "node-x");

        assertThat(r).as("moved: read again").isEqualTo(-9);
        assertThat(pin(user)).as("nothing changed").isEqualTo(70);
        assertThat(redis.opsForSet().isMember(WatermarkKeys.nodeUsersKey("node-m"), user)).isTrue();
        assertThat(index.disconnect(s)).as("the adapter reads the node itself").isTrue();
        assertThat(redis.opsForSet().isMember(WatermarkKeys.nodeUsersKey("node-m"), user)).isFalse();
        assertThat(pin(user)).isNull();
    }

    @Test
    void anOutOfOrderAckNeverLiftsThePinPastAGap() {
        RecordingSession s = new RecordingSession("wm-gap", "s1");
        index.connect(s, NODE);
        index.deliver(s, new long[] {102, 103, 104});
        assertThat(pin("wm-gap")).isEqualTo(102);

        assertThat(index.ack(s, new long[] {104})).isEqualTo(1);
        assertThat(pin("wm-gap")).isEqualTo(102);
        assertThat(count("wm-gap")).isEqualTo("2");

        index.ack(s, new long[] {102});
        assertThat(pin("wm-gap")).isEqualTo(103);
        index.ack(s, new long[] {103});
        assertThat(redis.opsForZSet().score(WatermarkKeys.PINS, "wm-gap")).isNull();
        assertThat(count("wm-gap")).isNull();
    }

    @Test
    void theIndexTellsThePollerWhichRowsArePendingOwedOrDone() {
        RecordingSession s = new RecordingSession("wm-status", "s1");
        index.connect(s, NODE);
        assertThat(index.deliver(s, new long[] {10, 11})).isEqualTo(2);
        assertThat(index.owe(s, new long[] {12, 13})).isTrue();
        index.ack(s, new long[] {10});
        index.newGeneration(77, 5);
        assertThat(status(s, 77, 5, false, 10, 11, 12, 14)).containsExactly(0, 2, 1, 0);
        assertThat(index.status("wm-status", "other", 77, 5, false, new long[] {11})).as("another connection's epoch").isInstanceOf(Statuses.NotTheEpoch.class);
        assertThat(status(s, 78, 5, false, 11)).as("under a marker Redis does not hold").isNull();
        assertThat(status(s, 77, 4, false, 11)).as("under a generation Redis does not hold").isNull();
        assertThat(status(s, 77, 5, true, 11)).as("the cluster: no word from the leader that every node trusts it").isNull();
        index.allTrusted(5, java.time.Duration.ofSeconds(10));
        assertThat(status(s, 77, 5, true, 11)).containsExactly(2);
        index.notAllTrusted();
        assertThat(status(s, 77, 5, true, 11)).isNull();
        index.deliver(s, new long[] {12});
        assertThat(status(s, 77, 5, false, 12)).as("written at last: owed becomes pending").containsExactly(2);
    }

    @Test
    void owedRowsHoldTheLineButDoNotCountAgainstMaxPending() {
        RecordingSession s = new RecordingSession("wm-owed", "s1");
        index.connect(s, NODE);
        index.owe(s, new long[] {40, 41, 42});
        assertThat(pin("wm-owed")).isEqualTo(40);
        assertThat(count("wm-owed")).isNull();
        index.deliver(s, new long[] {50});
        assertThat(count("wm-owed")).isEqualTo("1");
        assertThat(pin("wm-owed")).isEqualTo(40);
        index.ack(s, new long[] {50});
        assertThat(pin("wm-owed")).as("an ack of a later id leaves owed ids holding the line").isEqualTo(40);
    }

    @Test
    void anAckForAnIdNeverDeliveredChangesNothing() {
        RecordingSession s = new RecordingSession("wm-unknown", "s1");
        index.connect(s, NODE);
        index.deliver(s, new long[] {7});
        assertThat(index.ack(s, new long[] {6, 8})).isZero();
        assertThat(pin("wm-unknown")).isEqualTo(7);
        assertThat(count("wm-unknown")).isEqualTo("1");
    }

    @Test
    void aSupersededConnectionCanNeitherDeliverNorAckNorTearDownItsSuccessor() {
        RecordingSession old = new RecordingSession("wm-epoch", "old");
        RecordingSession current = new RecordingSession("wm-epoch", "new");
        index.connect(old, NODE);
        index.deliver(old, new long[] {1, 2});
        index.connect(current, NODE);
        assertThat(pin("wm-epoch")).as("the new epoch starts with nothing pending").isNull();

        index.deliver(current, new long[] {5});
        assertThat(index.deliver(old, new long[] {3})).isEqualTo(-1);
        assertThat(index.ack(old, new long[] {5})).isZero();
        assertThat(index.disconnect(old)).isFalse();
        assertThat(pin("wm-epoch")).isEqualTo(5);

        assertThat(index.disconnect(current)).isTrue();
        assertThat(pin("wm-epoch")).isNull();
        assertThat(redis.hasKey(WatermarkKeys.pendingKey("wm-epoch"))).isFalse();
    }

    @Test
    void oneBatchedCallJudgesEachConnectionOnItsOwnEpoch() {
        RecordingSession alice = new RecordingSession("wm-batch-a", "a1");
        RecordingSession staleBob = new RecordingSession("wm-batch-b", "b1");
        RecordingSession bob = new RecordingSession("wm-batch-b", "b2");
        RecordingSession carol = new RecordingSession("wm-batch-c", "c1");
        index.connect(alice, NODE);
        index.connect(staleBob, NODE);
        index.connect(bob, NODE);
        index.connect(carol, NODE);

        long[] pending = index.deliver(List.of(
                WatermarkIndex.Group.of(alice, new long[] {20, 21}),
                WatermarkIndex.Group.of(staleBob, new long[] {22}),
                WatermarkIndex.Group.of(carol, new long[] {23, 24, 25})));
        assertThat(pending).containsExactly(2, -1, 3);
        assertThat(redis.hasKey(WatermarkKeys.pendingKey("wm-batch-b"))).as("nothing recorded for a stale epoch").isFalse();
        assertThat(pin("wm-batch-a")).isEqualTo(20);
        assertThat(pin("wm-batch-c")).isEqualTo(23);

        long[] acked = index.ack(List.of(
                WatermarkIndex.Group.of(carol, new long[] {24, 99}),
                WatermarkIndex.Group.of(staleBob, new long[] {22}),
                WatermarkIndex.Group.of(alice, new long[] {20, 21})));
        assertThat(acked).containsExactly(1, 0, 2);
        assertThat(pin("wm-batch-a")).isNull();
        assertThat(pin("wm-batch-c")).as("24 acked out of order: the pin stays at the gap").isEqualTo(23);
        assertThat(count("wm-batch-c")).isEqualTo("2");
    }

    @Test
    void aReassertKeepsWhatWasRecordedForTheConnectionAndOnlyReplacesAnotherEpochOnASingleNode() {
        RecordingSession s = new RecordingSession("wm-reassert", "s1");
        index.connect(s, NODE);
        index.deliver(s, new long[] {30});
        assertThat(index.reassert(s, NODE, false)).isEqualTo(EpochClaim.ALREADY_NAMED);
        assertThat(pin("wm-reassert")).isEqualTo(30);
        RecordingSession next = new RecordingSession("wm-reassert", "s2");
        assertThat(index.reassert(next, NODE, false)).isEqualTo(EpochClaim.NAMED);
        assertThat(pin("wm-reassert")).isNull();
    }

    @Test
    void inTheClusterAReassertNeverNamesAConnectionAgain() {
        RecordingSession onB = new RecordingSession("wm-reassert-c", "b1");
        RecordingSession onA = new RecordingSession("wm-reassert-c", "a1");
        alive("node-a");
        index.connect(onB, "node-b");
        index.deliver(onB, new long[] {31});
        assertThat(index.reassert(onA, "node-a", true)).as("superseded: the caller closes it with 4009")
                .isEqualTo(EpochClaim.SUPERSEDED);
        assertThat(pin("wm-reassert-c")).as("the other node's records are kept").isEqualTo(31);

        // withdrawn on purpose (a poller elsewhere), or lost with Redis's data: it cannot tell
        assertThat(index.disconnect(onB)).isTrue();
        index.connect(onA, "node-a");
        assertThat(index.disconnect(onA)).isTrue();
        assertThat(index.reassert(onA, "node-a", true)).as("no epoch: the caller closes it with 1012").isEqualTo(EpochClaim.GONE);
        assertThat(redis.hasKey(WatermarkKeys.sessionKey("wm-reassert-c"))).as("nothing named again").isFalse();
        assertThat(index.reassert(onA, "node-a", false)).as("the single-node mode re-names it").isEqualTo(EpochClaim.NAMED);
    }

    @Test
    void aConnectSaysWhereTheEarlierEpochWasAndMovesTheUserBetweenNodeSets() {
        RecordingSession a = new RecordingSession("wm-move", "a1");
        RecordingSession b = new RecordingSession("wm-move", "b1");
        assertThat(index.connect(a, "node-a")).isEqualTo(Optional.empty());
        assertThat(index.connect(b, "node-b")).isEqualTo(Optional.of(new SessionLocation("node-a", "a1")));
        assertThat(redis.opsForSet().isMember(WatermarkKeys.nodeUsersKey("node-a"), "wm-move")).isFalse();
        assertThat(redis.opsForSet().isMember(WatermarkKeys.nodeUsersKey("node-b"), "wm-move")).isTrue();
        assertThat(index.locate(List.of("wm-move", "wm-nobody"))).containsOnlyKeys("wm-move")
                .hasEntrySatisfying("wm-move", where -> assertThat(where).isEqualTo(new SessionLocation("node-b", "b1")));
    }

    @Test
    void aNodeThatLeavesTakesItsUsersOutOfLiveDeliveryButNotThoseThatMovedOn() {
        RecordingSession stays = new RecordingSession("wm-leave-1", "s1");
        RecordingSession moved = new RecordingSession("wm-leave-2", "s2");
        index.connect(stays, "node-x");
        index.connect(moved, "node-x");
        index.deliver(stays, new long[] {60});
        index.deliver(moved, new long[] {61});
        // moved reconnected on node-y just as node-x was swept, before node-x's set lost it
        redis.opsForValue().set(WatermarkKeys.nodeKey("wm-leave-2"), "node-y");

        assertThat(index.withdrawNode("node-x", 500)).isEqualTo(2);
        assertThat(index.withdrawNode("node-x", 500)).isZero();
        assertThat(pin("wm-leave-1")).isNull();
        assertThat(redis.hasKey(WatermarkKeys.sessionKey("wm-leave-1"))).isFalse();
        assertThat(pin("wm-leave-2")).as("its epoch is node-y's now").isEqualTo(61);
    }

    @Test
    void afterANewGenerationPinsOfUsersOnNoLiveNodeAreForgotten() {
        RecordingSession live = new RecordingSession("wm-orphan-1", "s1");
        RecordingSession orphan = new RecordingSession("wm-orphan-2", "s2");
        alive("node-live");
        index.connect(live, "node-live");
        index.connect(orphan, "node-gone");
        index.deliver(live, new long[] {70});
        index.deliver(orphan, new long[] {71});

        // 600 more orphans around them: the pins are walked a page (500) at a time
        for (int i = 0; i < 600; i++) {
            RecordingSession o = new RecordingSession("wm-orphan-many-" + i, "m" + i);
            index.connect(o, "node-gone");
            index.deliver(o, new long[] {1000 + i});
        }

        long forgotten = index.forgetOrphans();
        assertThat(forgotten).isGreaterThanOrEqualTo(601);
        assertThat(pin("wm-orphan-1")).isEqualTo(70);
        assertThat(pin("wm-orphan-2")).isNull();
        for (int i = 0; i < 600; i++) {
            assertThat(pin("wm-orphan-many-" + i)).as("orphan %d", i).isNull();
        }
    }

    @Test
    void whereAUserIsConnectedIsToldOnlyWhileTheIndexIsKnownToBeWhole() {
        RecordingSession s = new RecordingSession("wm-locate", "l1");
        index.connect(s, "node-l");
        index.newGeneration(300, 30);
        assertThat(index.locateIfWhole(List.of("wm-locate", "wm-locate-nobody"), 300, 30, false).orElseThrow())
                .containsOnlyKeys("wm-locate").hasEntrySatisfying("wm-locate", w -> assertThat(w).isEqualTo(new SessionLocation("node-l", "l1")));
        assertThat(index.locateIfWhole(List.of("wm-locate"), 299, 30, false)).as("another marker").isEmpty();
        assertThat(index.locateIfWhole(List.of("wm-locate"), 300, 29, false)).as("another generation").isEmpty();
        assertThat(index.locateIfWhole(List.of("wm-locate"), 300, 30, true)).as("the cluster, without the leader's word").isEmpty();
        index.allTrusted(30, java.time.Duration.ofSeconds(10));
        assertThat(index.locateIfWhole(List.of("wm-locate"), 300, 30, true).orElseThrow()).containsOnlyKeys("wm-locate");
        index.notAllTrusted();
    }

    @Test
    void aNodesRebuildForgetsOnlyItsOwnUsersInTheCluster() {
        RecordingSession mine = new RecordingSession("wm-forget-1", "s1");
        RecordingSession theirs = new RecordingSession("wm-forget-2", "s2");
        index.connect(mine, "node-m");
        index.connect(theirs, "node-t");
        index.deliver(mine, new long[] {80});
        index.deliver(theirs, new long[] {81});
        index.forgetUser("wm-forget-1", "node-m");
        index.forgetUser("wm-forget-2", "node-m");
        assertThat(pin("wm-forget-1")).isNull();
        assertThat(pin("wm-forget-2")).isEqualTo(81);
        index.forgetUser("wm-forget-2", null);
        assertThat(pin("wm-forget-2")).as("the single-node mode forgets whatever node Redis names").isNull();
    }

    @Test
    void aRebuildDropsIdsTheOutboxNoLongerHasAndKeepsThoseRecordedAfterTheScan() {
        RecordingSession s = new RecordingSession("wm-rebuild", "s1");
        index.connect(s, NODE);
        index.deliver(s, new long[] {5, 9, 15});
        assertThat(index.rebuildUser(s, NODE, false, 10, new long[] {9, 10})).isEqualTo(EpochClaim.NAMED);
        index.newGeneration(78, 6);
        assertThat(status(s, 78, 6, false, 5, 9, 10, 15)).containsExactly(0, 2, 1, 2);
        assertThat(pin("wm-rebuild")).isEqualTo(9);
    }

    @Test
    void aRebuildAfterAcksDoesNotOweTheAckedRowsTheOutboxStillHolds() {
        RecordingSession s = new RecordingSession("wm-rebuild-acked", "s1");
        index.connect(s, NODE);
        index.deliver(s, new long[] {20, 21, 22});
        assertThat(index.ack(s, new long[] {20, 21})).isEqualTo(2);
        // the scan finds all three in delivery: the poller has not retired 20 and 21 yet
        assertThat(index.rebuildUser(s, NODE, false, 30, new long[] {20, 21, 22, 23})).isEqualTo(EpochClaim.NAMED);
        index.newGeneration(79, 7);
        assertThat(status(s, 79, 7, false, 20, 21, 22, 23)).as("acked rows are retired, not written again").containsExactly(0, 0, 2, 1);
        assertThat(pin("wm-rebuild-acked")).isEqualTo(22);
        assertThat(redis.opsForZSet().size(WatermarkKeys.ackedKey("wm-rebuild-acked")))
                .as("the poller's judgment empties the acked set").isZero();
    }

    @Test
    void aRebuildLetsAckedIdsItDidNotFindLeaveTheAckedSet() {
        RecordingSession s = new RecordingSession("wm-rebuild-acked-gone", "s1");
        index.connect(s, NODE);
        index.deliver(s, new long[] {30, 31, 45});
        index.ack(s, new long[] {30, 31, 45});
        assertThat(index.rebuildUser(s, NODE, false, 40, new long[] {31})).isEqualTo(EpochClaim.NAMED);
        assertThat(redis.opsForZSet().rangeByScore(WatermarkKeys.ackedKey("wm-rebuild-acked-gone"), 0, 100))
                .as("30 was retired before the scan; 45 is above what the scan saw").containsExactly("31", "45");
        assertThat(pin("wm-rebuild-acked-gone")).isNull();
    }

    @Test
    void theAckedSetIsBoundedAndExpires() {
        RecordingSession s = new RecordingSession("wm-acked-bound", "s1");
        index.connect(s, NODE);
        long[] ids = java.util.stream.LongStream.rangeClosed(1, 5000).toArray();
        index.deliver(s, ids);
        assertThat(index.ack(s, ids)).isEqualTo(5000);
        String key = WatermarkKeys.ackedKey("wm-acked-bound");
        assertThat(redis.opsForZSet().size(key)).isEqualTo(4096);
        assertThat(redis.opsForZSet().score(key, "5000")).as("the highest ids are kept").isNotNull();
        assertThat(redis.opsForZSet().score(key, "904")).isNull();
        assertThat(redis.getExpire(key)).isBetween(1L, 600L);
        assertThat(index.ack(s, new long[] {1})).as("an id acked twice counts once").isZero();
    }

    @Test
    void inTheClusterARebuildOnlyRebuildsAConnectionRedisStillNamesOnALiveNode() {
        RecordingSession here = new RecordingSession("wm-rebuild-c", "h1");
        RecordingSession there = new RecordingSession("wm-rebuild-c", "t1");
        alive("node-h");
        index.connect(there, "node-t");
        index.deliver(there, new long[] {90});
        assertThat(index.rebuildUser(here, "node-h", true, 100, new long[] {90})).isEqualTo(EpochClaim.SUPERSEDED);
        assertThat(redis.opsForValue().get(WatermarkKeys.sessionKey("wm-rebuild-c"))).isEqualTo("t1");
        assertThat(pin("wm-rebuild-c")).isEqualTo(90);

        index.disconnect(there);
        assertThat(index.rebuildUser(here, "node-h", true, 100, new long[] {90})).as("no epoch: never named again")
                .isEqualTo(EpochClaim.GONE);
        index.connect(here, "node-h");
        redis.opsForZSet().remove(WatermarkKeys.NODES, "node-h");
        assertThat(index.rebuildUser(here, "node-h", true, 100, new long[] {90})).as("node-h was declared dead")
                .isEqualTo(EpochClaim.GONE);
        alive("node-h");
        assertThat(index.rebuildUser(here, "node-h", true, 100, new long[] {90})).isEqualTo(EpochClaim.NAMED);
        assertThat(pin("wm-rebuild-c")).isEqualTo(90);
    }

    @Test
    void theMarkerMovesOnlyFromTheValueTheCallerSaw() {
        markerSetTo(90);
        assertThat(index.rotateMarker(89, 91)).isFalse();
        assertThat(index.marker()).hasValue(90);
        assertThat(index.rotateMarker(90, 91)).isTrue();
        assertThat(index.marker()).hasValue(91);
    }

    private long markerSetTo(long marker) {
        redis.opsForValue().set(WatermarkKeys.MARKER, Long.toString(marker));
        return marker;
    }

    /** The statuses as status.lua writes them (0 neither, 1 owed, 2 pending); null: not known to be whole; empty: not the epoch. */
    private int[] status(RecordingSession s, long token, long generation, boolean cluster, long... ids) {
        return switch (index.status(s.userId(), s.sessionId(), token, generation, cluster, ids)) {
            case Statuses.Unknown u -> null;
            case Statuses.NotTheEpoch n -> new int[0];
            case Statuses.Known k -> k.each().stream().mapToInt(WatermarkIndex.RowStatus::ordinal).toArray();
        };
    }

    /** A node's heartbeat, as presence writes it (Redis's clock, in ms). */
    private void alive(String node) {
        redis.opsForZSet().add(WatermarkKeys.NODES, node, redis.execute(
                (org.springframework.data.redis.core.RedisCallback<Long>) c -> c.serverCommands().time()));
    }

    private Double pin(String user) {
        return redis.opsForZSet().score(WatermarkKeys.PINS, user);
    }

    private String count(String user) {
        Object v = redis.opsForHash().get(WatermarkKeys.COUNTS, user);
        return v == null ? null : v.toString();
    }
}
