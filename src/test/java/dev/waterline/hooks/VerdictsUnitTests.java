package dev.waterline.hooks;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The judgement of a call's outcome ({@link Verdicts}): what is recorded, when it is due, what the breaker hears. */
class VerdictsUnitTests {

    static final Instant NOW = Instant.parse("2026-12-04T12:00:00Z");
    static final Verdicts.Rules RULES = new Verdicts.Rules(12, Duration.ofSeconds(1), Duration.ofMinutes(10), Duration.ofSeconds(10));

    static DeliveryQueueRepository.Claimed claimed(int attempt) {
        return new DeliveryQueueRepository.Claimed(7, new DeliveryQueueRepository.Hook("h", "c", "http", Map.of(), null, "u"),
                "h:m", "{}", attempt, 0, false);
    }

    @Test
    void aConfirmedCallIsDoneAndCountsAsAnAnswer() {
        DeliveryQueueRepository.Recorded r = Verdicts.judge(claimed(1), Sink.Outcome.DONE, false, NOW, RULES);
        assertThat(r.verdict()).isEqualTo(Verdict.DONE);
        assertThat(r.answered()).isTrue();
        assertThat(r.verdict().label()).isEqualTo("ok");
    }

    @Test
    void aPermanentRefusalIsDeadAtOnceWithItsErrorClipped() {
        DeliveryQueueRepository.Recorded r = Verdicts.judge(claimed(1), new Sink.Outcome.Permanent("x".repeat(900)), false, NOW, RULES);
        assertThat(r.verdict()).isEqualTo(Verdict.DEAD);
        assertThat(r.answered()).as("the target answered: the breaker's count resets").isTrue();
        assertThat(r.error()).hasSize(Verdicts.ERROR_CHARS);
    }

    @Test
    void aRetryIsDueAfterItsBackoffAndIsAFailureForTheBreaker() {
        DeliveryQueueRepository.Recorded r = Verdicts.judge(claimed(3), Sink.Outcome.retry("503"), false, NOW, RULES);
        assertThat(r.verdict()).isEqualTo(Verdict.RETRY);
        assertThat(r.answered()).isFalse();
        assertThat(r.error()).isEqualTo("503");
        // the third attempt's delay: 4 s with equal jitter over its upper half
        assertThat(r.dueAt()).isBetween(NOW.plusSeconds(2), NOW.plusSeconds(4));
    }

    @Test
    void aRetryAfterFromTheTargetIsObeyedUpToTheLongestBackoff() {
        DeliveryQueueRepository.Recorded r = Verdicts.judge(claimed(1), new Sink.Outcome.Retry("429", Duration.ofSeconds(30)), false, NOW, RULES);
        assertThat(r.dueAt()).isEqualTo(NOW.plusSeconds(30));
        DeliveryQueueRepository.Recorded capped = Verdicts.judge(claimed(1), new Sink.Outcome.Retry("429", Duration.ofHours(2)), false, NOW, RULES);
        assertThat(capped.dueAt()).isEqualTo(NOW.plus(Duration.ofMinutes(10)));
    }

    @Test
    void theLastAttemptsRetryGoesToTheDeadLettersSayingWhy() {
        DeliveryQueueRepository.Recorded r = Verdicts.judge(claimed(12), Sink.Outcome.retry("timeout"), false, NOW, RULES);
        assertThat(r.verdict()).isEqualTo(Verdict.DEAD);
        assertThat(r.answered()).isFalse();
        assertThat(r.error()).isEqualTo("gave up after 12 attempts; the last: timeout");
    }

    @Test
    void aRetryCutShortByShutdownIsReleasedNowCostingNoAttemptAndTellingTheBreakerNothing() {
        DeliveryQueueRepository.Recorded r = Verdicts.judge(claimed(12), Sink.Outcome.retry("interrupted"), true, NOW, RULES);
        assertThat(r.verdict()).isEqualTo(Verdict.RELEASE);
        assertThat(r.dueAt()).isEqualTo(NOW);
        assertThat(r.answered()).isNull();
        assertThat(r.verdict().label()).as("not an attempt: not counted").isNull();
        assertThat(Verdicts.judgesTarget(Sink.Outcome.retry("interrupted"), true)).isFalse();
        assertThat(Verdicts.judgesTarget(Sink.Outcome.retry("503"), false)).isTrue();
    }

    @Test
    void aCallNotMadeIsReleasedWithinAboutACallTimeoutAndSaysNothingAboutTheTarget() {
        DeliveryQueueRepository.Recorded r = Verdicts.judge(claimed(4), new Sink.Outcome.NotMade("no room"), false, NOW, RULES);
        assertThat(r.verdict()).isEqualTo(Verdict.RELEASE);
        assertThat(r.dueAt()).isBetween(NOW.plusSeconds(5), NOW.plusSeconds(10));
        assertThat(r.error()).as("the target's last error stays").isNull();
        assertThat(r.answered()).isNull();
        assertThat(Verdicts.judgesTarget(new Sink.Outcome.NotMade("no room"), false)).isFalse();
    }

    @Test
    void onlyAttemptsMadeCarryAnOutcomeLabel() {
        assertThat(Verdict.values()).extracting(Verdict::label).containsExactly("ok", "retry", null, "dead");
    }
}
