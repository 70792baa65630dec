package dev.waterline.streams;

import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.waterline.streams.AppendDecider.Decision;
import dev.waterline.streams.AppendDecider.Done;
import dev.waterline.streams.AppendDecider.Facts;
import dev.waterline.streams.AppendDecider.Refused;
import dev.waterline.streams.AppendDecider.Row;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The appender's decisions against rows as read, without a database (S1, S2, S3). */
class AppendDeciderUnitTests {

    static final String AT = "2026-12-05T10:00:00Z";
    static final long NOW = Instant.parse(AT).toEpochMilli();
    static final AppendRequest.Reply NOBODY = new AppendRequest.Reply() {
        @Override
        public void done(StreamView stream) {
        }

        @Override
        public void refused(Refusal why) {
        }
    };

    final Map<String, Row> rows = new HashMap<>();
    final Map<String, Map<Long, Chunk>> stored = new HashMap<>();
    final Map<String, AppendDecider.BlobMeta> blobs = new HashMap<>();

    Row row(String streamId, String state, long lastSeq, long lastAppendAt) {
        Row row = new Row(new AppendDecider.Stored(streamId, "chat-1", "producer", state, lastSeq, "2026-12-05T09:00:00Z",
                Instant.ofEpochMilli(lastAppendAt), new AppendDecider.Opening("title", "m-" + streamId, 7, null)));
        rows.put(streamId, row);
        return row;
    }

    Facts facts() {
        return new Facts(rows, stored, Set.of(List.of("s1", "member")), blobs, AT, NOW - 60_000);
    }

    static AppendRequest append(String streamId, String user, long... seqs) {
        return AppendRequest.append(streamId, user, java.util.Arrays.stream(seqs).mapToObj(s -> new NewChunk(s, "d" + s, null)).toList(),
                NOBODY);
    }

    static Refusal refusal(Decision d) {
        assertThat(d).isInstanceOf(Refused.class);
        return ((Refused) d).why();
    }

    static StreamView view(Decision d) {
        assertThat(d).isInstanceOf(Done.class);
        return ((Done) d).view();
    }

    @Test
    void appendsInOneBatchFollowEachOtherAndAGapIsRefusedWithTheNextSeq() {
        row("s1", StreamView.OPEN, 2, NOW);
        List<Decision> decided = AppendDecider.decideAll(List.of(append("s1", "producer", 3, 4), append("s1", "producer", 5),
                append("s1", "producer", 7)), facts());

        assertThat(view(decided.get(0)).lastSeq()).isEqualTo(4);
        assertThat(view(decided.get(1)).lastSeq()).isEqualTo(5);
        Refusal gap = refusal(decided.get(2));
        assertThat(gap.code()).isEqualTo("gap");
        assertThat(gap.expectedSeq()).isEqualTo(6);
        Row row = rows.get("s1");
        assertThat(row.added).extracting(Chunk::getSeq).containsExactly(3L, 4L, 5L);
        assertThat(row.added).extracting(Chunk::getAt).containsOnly(AT);
        assertThat(AppendDecider.changed(rows)).containsExactly(row);
    }

    @Test
    void aRetryOfStoredChunksWithTheSameContentIsDoneAndAddsNothingAndADifferentOneIsAConflict() {
        row("s1", StreamView.OPEN, 2, NOW);
        stored.put("s1", Map.of(1L, new Chunk(1, "d1", null, null, null, AT, 0), 2L, new Chunk(2, "d2", null, null, null, AT, 0)));
        Decision retry = AppendDecider.decideAll(List.of(append("s1", "producer", 1, 2)), facts()).getFirst();
        assertThat(view(retry).lastSeq()).isEqualTo(2);
        assertThat(AppendDecider.changed(rows)).isEmpty();

        AppendRequest differs = AppendRequest.append("s1", "producer", List.of(new NewChunk(2, "other", null), new NewChunk(3, "d3", null)),
                NOBODY);
        Refusal conflict = refusal(AppendDecider.decideAll(List.of(differs), facts()).getFirst());
        assertThat(conflict.code()).isEqualTo("conflict");
        assertThat(conflict.expectedSeq()).isEqualTo(3);
        assertThat(rows.get("s1").added).as("nothing of a refused request").isEmpty();
    }

    @Test
    void aRetryWithinTheBatchIsComparedWithWhatTheBatchAdded() {
        row("s1", StreamView.OPEN, 0, NOW);
        List<Decision> decided = AppendDecider.decideAll(List.of(append("s1", "producer", 1, 2), append("s1", "producer", 2, 3)),
                facts());
        assertThat(view(decided.get(1)).lastSeq()).isEqualTo(3);
        assertThat(rows.get("s1").added).extracting(Chunk::getSeq).containsExactly(1L, 2L, 3L);
    }

    @Test
    void theRangesSentAgainAreThoseAtOrBelowTheStoredLastSeq() {
        row("s1", StreamView.OPEN, 5, NOW);
        row("s2", StreamView.OPEN, 0, NOW);
        List<AppendDecider.Retried> retried = AppendDecider.retried(List.of(append("s1", "producer", 4, 5, 6),
                append("s1", "producer", 2, 3), append("s2", "producer", 1), append("none", "producer", 1)), rows);
        assertThat(retried).containsExactly(new AppendDecider.Retried("s1", 2, 5, "2026-12-05T09:00:00Z"));
    }

    @Test
    void onlyTheProducerMayChangeAStreamAndANonMemberIsToldThereIsNone() {
        row("s1", StreamView.OPEN, 0, NOW);
        assertThat(refusal(AppendDecider.decideAll(List.of(append("s1", "member", 1)), facts()).getFirst()).code())
                .isEqualTo("forbidden");
        assertThat(refusal(AppendDecider.decideAll(List.of(append("s1", "stranger", 1)), facts()).getFirst()).code())
                .isEqualTo("not_found");
        assertThat(refusal(AppendDecider.decideAll(List.of(append("missing", "producer", 1)), facts()).getFirst()).code())
                .isEqualTo("not_found");
    }

    @Test
    void aBlobMustHaveBeenUploadedToThisStream() {
        row("s1", StreamView.OPEN, 0, NOW);
        blobs.put("b-other", new AppendDecider.BlobMeta("s2", 10, "image/png"));
        blobs.put("b-mine", new AppendDecider.BlobMeta("s1", 12, "image/png"));
        AppendRequest foreign = AppendRequest.append("s1", "producer", List.of(new NewChunk(1, null, "b-other")), NOBODY);
        assertThat(refusal(AppendDecider.decideAll(List.of(foreign), facts()).getFirst()).code()).isEqualTo("invalid");

        AppendRequest mine = AppendRequest.append("s1", "producer", List.of(new NewChunk(1, null, "b-mine")), NOBODY);
        assertThat(view(AppendDecider.decideAll(List.of(mine), facts()).getFirst()).lastSeq()).isEqualTo(1);
        Chunk added = rows.get("s1").added.getFirst();
        assertThat(added.getSize()).isEqualTo(12);
        assertThat(added.getContentType()).isEqualTo("image/png");
    }

    @Test
    void completeNeedsTheLastSeqAndIsIdempotentAndClosesTheStreamToAppends() {
        row("s1", StreamView.OPEN, 3, NOW);
        AppendRequest early = AppendRequest.complete("s1", "producer", 2, NOBODY);
        AppendRequest late = AppendRequest.complete("s1", "producer", 4, NOBODY);
        AppendRequest right = AppendRequest.complete("s1", "producer", 3, NOBODY);
        List<Decision> decided = AppendDecider.decideAll(List.of(early, late, right, right, append("s1", "producer", 4),
                AppendRequest.complete("s1", "producer", 1, NOBODY), AppendRequest.abort("s1", "producer", "why", NOBODY)), facts());

        assertThat(refusal(decided.get(0)).code()).isEqualTo("conflict");
        assertThat(refusal(decided.get(1)).code()).isEqualTo("gap");
        assertThat(view(decided.get(2)).state()).isEqualTo(StreamView.COMPLETE);
        assertThat(view(decided.get(3)).state()).as("again: done").isEqualTo(StreamView.COMPLETE);
        assertThat(refusal(decided.get(4)).code()).isEqualTo("closed");
        assertThat(refusal(decided.get(5)).code()).isEqualTo("closed");
        assertThat(refusal(decided.get(6)).code()).isEqualTo("closed");
    }

    @Test
    void abortKeepsTheReasonAndIsIdempotent() {
        row("s1", StreamView.OPEN, 0, NOW);
        List<Decision> decided = AppendDecider.decideAll(List.of(AppendRequest.abort("s1", "producer", "changed my mind", NOBODY),
                AppendRequest.abort("s1", "producer", "again", NOBODY)), facts());
        assertThat(view(decided.get(0)).reason()).isEqualTo("changed my mind");
        assertThat(view(decided.get(1)).state()).isEqualTo(StreamView.ABORTED);
        assertThat(rows.get("s1").reason).isEqualTo("changed my mind");
    }

    @Test
    void theIdleAbortTakesOnlyAnOpenStreamNothingWasAppendedToSinceTheCutoff() {
        row("idle", StreamView.OPEN, 1, NOW - 120_000);
        row("busy", StreamView.OPEN, 1, NOW - 1_000);
        row("fresh", StreamView.OPEN, 1, NOW - 120_000);
        List<Decision> decided = AppendDecider.decideAll(List.of(AppendRequest.idleAbort("idle", NOBODY),
                AppendRequest.idleAbort("busy", NOBODY), append("fresh", "producer", 2), AppendRequest.idleAbort("fresh", NOBODY)),
                facts());
        assertThat(view(decided.get(0)).state()).isEqualTo(StreamView.ABORTED);
        assertThat(view(decided.get(0)).reason()).isEqualTo("idle");
        assertThat(view(decided.get(1)).state()).isEqualTo(StreamView.OPEN);
        assertThat(view(decided.get(3)).state()).as("appended to in this batch").isEqualTo(StreamView.OPEN);
        assertThat(AppendDecider.changed(rows)).extracting(r -> r.streamId).containsExactly("fresh", "idle");
    }
}
