package dev.waterline.watermark;

import java.util.List;

import dev.waterline.support.RecordingSession;
import dev.waterline.support.WaterlineIntegrationTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.data.redis.core.StringRedisTemplate;
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
class WatermarkIndexIntegrationTests {

    @Autowired
    WatermarkIndex index;

    @Autowired
    StringRedisTemplate redis;

    @Test
    void anOutOfOrderAckNeverLiftsThePinPastAGap() {
        RecordingSession s = new RecordingSession("wm-gap", "s1");
        index.connect(s);
        index.deliver(s, new long[] {102, 103, 104});
        assertThat(pin("wm-gap")).isEqualTo(102);

        assertThat(index.ack(s, new long[] {104})).isEqualTo(1);
        assertThat(pin("wm-gap")).isEqualTo(102);
        assertThat(count("wm-gap")).isEqualTo("2");

        index.ack(s, new long[] {102});
        assertThat(pin("wm-gap")).isEqualTo(103);
        index.ack(s, new long[] {103});
        assertThat(redis.opsForZSet().score(WatermarkIndex.PINS, "wm-gap")).isNull();
        assertThat(count("wm-gap")).isNull();
    }

    @Test
    void theIndexTellsThePollerWhichRowsArePendingOwedOrDone() {
        RecordingSession s = new RecordingSession("wm-status", "s1");
        index.connect(s);
        assertThat(index.deliver(s, new long[] {10, 11})).isEqualTo(2);
        assertThat(index.shed(s, new long[] {12, 13})).isTrue();
        index.ack(s, new long[] {10});
        long marker = markerSetTo(77);
        assertThat(index.status(s, marker, new long[] {10, 11, 12, 14})).containsExactly(0, 2, 1, 0);
        assertThat(index.status(new RecordingSession("wm-status", "other"), marker, new long[] {11})).isNull();
        assertThat(index.status(s, marker + 1, new long[] {11})).as("under a marker Redis does not hold").isNull();
        index.deliver(s, new long[] {12});
        assertThat(index.status(s, marker, new long[] {12})).as("written at last: owed becomes pending").containsExactly(2);
    }

    @Test
    void owedRowsHoldTheLineButDoNotCountAgainstMaxPending() {
        RecordingSession s = new RecordingSession("wm-owed", "s1");
        index.connect(s);
        index.shed(s, new long[] {40, 41, 42});
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
        index.connect(s);
        index.deliver(s, new long[] {7});
        assertThat(index.ack(s, new long[] {6, 8})).isZero();
        assertThat(pin("wm-unknown")).isEqualTo(7);
        assertThat(count("wm-unknown")).isEqualTo("1");
    }

    @Test
    void aSupersededConnectionCanNeitherDeliverNorAckNorTearDownItsSuccessor() {
        RecordingSession old = new RecordingSession("wm-epoch", "old");
        RecordingSession current = new RecordingSession("wm-epoch", "new");
        index.connect(old);
        index.deliver(old, new long[] {1, 2});
        index.connect(current);
        assertThat(pin("wm-epoch")).as("the new epoch starts with nothing pending").isNull();

        index.deliver(current, new long[] {5});
        assertThat(index.deliver(old, new long[] {3})).isEqualTo(-1);
        assertThat(index.ack(old, new long[] {5})).isZero();
        assertThat(index.disconnect(old)).isFalse();
        assertThat(pin("wm-epoch")).isEqualTo(5);

        assertThat(index.disconnect(current)).isTrue();
        assertThat(pin("wm-epoch")).isNull();
        assertThat(redis.hasKey(WatermarkIndex.pendingKey("wm-epoch"))).isFalse();
    }

    @Test
    void oneBatchedCallJudgesEachConnectionOnItsOwnEpoch() {
        RecordingSession alice = new RecordingSession("wm-batch-a", "a1");
        RecordingSession staleBob = new RecordingSession("wm-batch-b", "b1");
        RecordingSession bob = new RecordingSession("wm-batch-b", "b2");
        RecordingSession carol = new RecordingSession("wm-batch-c", "c1");
        index.connect(alice);
        index.connect(staleBob);
        index.connect(bob);
        index.connect(carol);

        long[] pending = index.deliver(List.of(
                new WatermarkIndex.Group(alice, new long[] {20, 21}),
                new WatermarkIndex.Group(staleBob, new long[] {22}),
                new WatermarkIndex.Group(carol, new long[] {23, 24, 25})));
        assertThat(pending).containsExactly(2, -1, 3);
        assertThat(redis.hasKey(WatermarkIndex.pendingKey("wm-batch-b"))).as("nothing recorded for a stale epoch").isFalse();
        assertThat(pin("wm-batch-a")).isEqualTo(20);
        assertThat(pin("wm-batch-c")).isEqualTo(23);

        long[] acked = index.ack(List.of(
                new WatermarkIndex.Group(carol, new long[] {24, 99}),
                new WatermarkIndex.Group(staleBob, new long[] {22}),
                new WatermarkIndex.Group(alice, new long[] {20, 21})));
        assertThat(acked).containsExactly(1, 0, 2);
        assertThat(pin("wm-batch-a")).isNull();
        assertThat(pin("wm-batch-c")).as("24 acked out of order: the pin stays at the gap").isEqualTo(23);
        assertThat(count("wm-batch-c")).isEqualTo("2");
    }

    @Test
    void aReassertKeepsWhatWasRecordedForTheConnectionAndOnlyReplacesAnotherEpoch() {
        RecordingSession s = new RecordingSession("wm-reassert", "s1");
        index.connect(s);
        index.deliver(s, new long[] {30});
        assertThat(index.reassert(s)).isFalse();
        assertThat(pin("wm-reassert")).isEqualTo(30);
        RecordingSession next = new RecordingSession("wm-reassert", "s2");
        assertThat(index.reassert(next)).isTrue();
        assertThat(pin("wm-reassert")).isNull();
    }

    @Test
    void aRebuildDropsIdsTheOutboxNoLongerHasAndKeepsThoseRecordedAfterTheScan() {
        RecordingSession s = new RecordingSession("wm-rebuild", "s1");
        index.connect(s);
        index.deliver(s, new long[] {5, 9, 15});
        index.rebuildUser(s, 10, new long[] {9, 10});
        assertThat(index.status(s, markerSetTo(78), new long[] {5, 9, 10, 15})).containsExactly(0, 2, 1, 2);
        assertThat(pin("wm-rebuild")).isEqualTo(9);
    }

    @Test
    void theMarkerMovesOnlyFromTheValueTheCallerSaw() {
        markerSetTo(90);
        assertThat(index.rotateMarker(89, 91)).isFalse();
        assertThat(index.marker()).isEqualTo(90);
        assertThat(index.rotateMarker(90, 91)).isTrue();
        assertThat(index.marker()).isEqualTo(91);
    }

    private long markerSetTo(long marker) {
        index.marker(marker);
        return marker;
    }

    private Double pin(String user) {
        return redis.opsForZSet().score(WatermarkIndex.PINS, user);
    }

    private String count(String user) {
        Object v = redis.opsForHash().get(WatermarkIndex.COUNTS, user);
        return v == null ? null : v.toString();
    }
}
