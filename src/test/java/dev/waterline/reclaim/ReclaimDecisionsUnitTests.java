package dev.waterline.reclaim;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

import dev.waterline.reclaim.IndexRebuild.Next;
import dev.waterline.watermark.MarkerStore;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ReclaimDecisionsUnitTests {

    final MarkerStore.Marker marker = new MarkerStore.Marker(41, 7);

    @Test
    void aRedisThatHoldsPostgresMarkerAndGenerationNeedsNoNewGeneration() {
        assertThat(Generations.whyNew(OptionalLong.of(41), OptionalLong.of(7), marker, 0, () -> false)).isNull();
    }

    @Test
    void aRedisWithoutAMarkerOrWithAnotherOneCallsForANewGeneration() {
        assertThat(Generations.whyNew(OptionalLong.empty(), OptionalLong.empty(), marker, 0, () -> false)).isEqualTo("Redis holds no marker");
        assertThat(Generations.whyNew(OptionalLong.of(40), OptionalLong.of(7), marker, 0, () -> false)).contains("Redis holds marker 40 of generation 7, PostgreSQL 41 of 7");
        assertThat(Generations.whyNew(OptionalLong.of(41), OptionalLong.of(6), marker, 0, () -> false)).isNotNull();
    }

    @Test
    void aDeadNodeOrANodesRequestCallsForANewGeneration() {
        assertThat(Generations.whyNew(OptionalLong.of(41), OptionalLong.of(7), marker, 2, () -> false)).isEqualTo("2 node(s) declared dead");
        assertThat(Generations.whyNew(OptionalLong.of(41), OptionalLong.of(7), marker, 0, () -> true)).isEqualTo("a node suspects it missed a write");
    }

    @Test
    void aNodesRequestIsReadOnlyWhenNothingElseCallsForANewGeneration() {
        List<String> asked = new ArrayList<>();
        Generations.whyNew(OptionalLong.empty(), OptionalLong.empty(), marker, 1, () -> asked.add("asked"));
        Generations.whyNew(OptionalLong.of(41), OptionalLong.of(7), marker, 1, () -> asked.add("asked"));

        assertThat(asked).isEmpty();
    }

    @Test
    void onlyAMarkerAheadOfPostgresMeansARestoredDatabase() {
        assertThat(Generations.redisAhead(OptionalLong.of(42), marker)).isTrue();
        assertThat(Generations.redisAhead(OptionalLong.of(41), marker)).isFalse();
        assertThat(Generations.redisAhead(OptionalLong.empty(), marker)).isFalse();
    }

    @Test
    void theLineIsTheLowestPinButNeverAboveTheHeadAndTheHeadWhenNoOneHoldsAPin() {
        assertThat(OutboxGc.line(OptionalLong.of(10), 50)).isEqualTo(10);
        assertThat(OutboxGc.line(OptionalLong.of(80), 50)).isEqualTo(50);
        assertThat(OutboxGc.line(OptionalLong.empty(), 50)).isEqualTo(50);
    }

    @Test
    void chunksRunUntilOneComesBackShort() {
        List<Long> counted = new ArrayList<>();
        OutboxGc.Deleted d = OutboxGc.inChunks(20, 100, chunks(100L, 100L, 30L, 100L), counted::add);

        assertThat(d).isEqualTo(new OutboxGc.Deleted(230, false));
        assertThat(counted).containsExactly(100L, 100L, 30L);
    }

    @Test
    void chunksStopAtTheMostOnePassRuns() {
        OutboxGc.Deleted d = OutboxGc.inChunks(2, 100, chunks(100L, 100L, 100L), n -> { });

        assertThat(d).isEqualTo(new OutboxGc.Deleted(200, false));
    }

    @Test
    void aLostLeaseStopsTheChunksAndSaysSo() {
        OutboxGc.Deleted d = OutboxGc.inChunks(20, 100, chunks(100L, null, 100L), n -> { });

        assertThat(d).isEqualTo(new OutboxGc.Deleted(100, true));
    }

    @Test
    void aNodeRebuildsItsPartWhenRedisHoldsTheGenerationItDoesNotTrust() {
        assertThat(IndexRebuild.next(OptionalLong.of(7), 7, -1, false, -1)).isEqualTo(Next.REBUILD);
    }

    @Test
    void aNodeDoesNothingWhileRedisLacksTheGenerationOrItTrustsItAlready() {
        assertThat(IndexRebuild.next(OptionalLong.empty(), 7, -1, true, -1)).isEqualTo(Next.NOTHING);
        assertThat(IndexRebuild.next(OptionalLong.of(6), 7, -1, true, -1)).isEqualTo(Next.NOTHING);
        assertThat(IndexRebuild.next(OptionalLong.of(7), 7, 7, true, -1)).isEqualTo(Next.NOTHING);
    }

    @Test
    void aSuspiciousNodeAsksForANewGenerationAndWaitsForItInsteadOfRebuilding() {
        assertThat(IndexRebuild.next(OptionalLong.of(7), 7, -1, true, -1)).isEqualTo(Next.ASK);
        assertThat(IndexRebuild.next(OptionalLong.of(7), 7, -1, false, 7)).as("still waiting above 7").isEqualTo(Next.NOTHING);
        assertThat(IndexRebuild.next(OptionalLong.of(8), 8, -1, false, 7)).as("the new one came").isEqualTo(Next.REBUILD);
    }

    /** Chunk results in turn; null: the lease is gone. */
    static java.util.function.Supplier<Optional<Long>> chunks(Long... rows) {
        Iterator<Long> it = java.util.Arrays.asList(rows).iterator();
        return () -> Optional.ofNullable(it.next());
    }
}
