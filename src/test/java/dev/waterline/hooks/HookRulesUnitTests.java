package dev.waterline.hooks;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The breaker's state rule and the retry delays, apart from the database. */
class HookRulesUnitTests {

    static Breaker.Result failed() {
        return new Breaker.Result(false, false);
    }

    static Breaker.Result answered() {
        return new Breaker.Result(true, false);
    }

    @Test
    void aClosedBreakerOpensAtTheThresholdOfConsecutiveFailuresAndAnAnswerResetsTheCount() {
        Breaker.Next four = Breaker.after(new Breaker.State("closed", 0), List.of(failed(), failed(), failed(), failed()), 5);
        assertThat(four).isEqualTo(new Breaker.Next("closed", 4, false, false));
        Breaker.Next reset = Breaker.after(new Breaker.State("closed", 4), List.of(answered(), failed()), 5);
        assertThat(reset).isEqualTo(new Breaker.Next("closed", 1, false, false));
        Breaker.Next five = Breaker.after(new Breaker.State("closed", 4), List.of(failed()), 5);
        assertThat(five).isEqualTo(new Breaker.Next("open", 5, true, false));
    }

    @Test
    void onlyTheProbeDecidesAHalfOpenBreaker() {
        assertThat(Breaker.after(new Breaker.State("half_open", 5), List.of(answered()), 5))
                .as("a straggler's answer").isEqualTo(new Breaker.Next("half_open", 0, false, false));
        assertThat(Breaker.after(new Breaker.State("half_open", 5), List.of(failed()), 5))
                .as("a straggler's failure").isEqualTo(new Breaker.Next("half_open", 6, false, false));
        assertThat(Breaker.after(new Breaker.State("half_open", 5), List.of(new Breaker.Result(true, true)), 5))
                .isEqualTo(new Breaker.Next("closed", 0, false, true));
        assertThat(Breaker.after(new Breaker.State("half_open", 5), List.of(new Breaker.Result(false, true)), 5))
                .isEqualTo(new Breaker.Next("open", 6, true, false));
    }

    @Test
    void aProbeNotMadeOpensTheBreakerAgainWithItsCooldownOverAndOtherCallsNotMadeChangeNothing() {
        assertThat(Breaker.after(new Breaker.State("half_open", 5), List.of(Breaker.Result.notMade(true)), 5))
                .isEqualTo(new Breaker.Next("open", 5, false, false, true));
        assertThat(Breaker.after(new Breaker.State("half_open", 5), List.of(Breaker.Result.notMade(false)), 5))
                .as("a straggler not made").isEqualTo(new Breaker.Next("half_open", 5, false, false));
        assertThat(Breaker.after(new Breaker.State("closed", 4), List.of(Breaker.Result.notMade(false)), 5))
                .isEqualTo(new Breaker.Next("closed", 4, false, false));
    }

    @Test
    void anOpenBreakerStaysOpenWhateverStragglersAnswer() {
        assertThat(Breaker.after(new Breaker.State("open", 5), List.of(answered(), failed(), failed()), 1))
                .isEqualTo(new Breaker.Next("open", 2, false, false));
    }

    @RepeatedTest(20)
    void theDelayDoublesWithEqualJitterUpToTheMaximum() {
        Duration base = Duration.ofSeconds(1), max = Duration.ofMinutes(10);
        for (int attempt = 1; attempt <= 12; attempt++) {
            long step = Math.min(1000L << (attempt - 1), max.toMillis());
            long d = Backoff.delay(attempt, null, base, max).toMillis();
            assertThat(d).as("attempt " + attempt).isBetween(step / 2, step);
        }
        assertThat(Backoff.delay(60, null, base, max).toMillis()).isBetween(max.toMillis() / 2, max.toMillis());
    }

    @Test
    void aRetryAfterIsTakenAsGivenButNeverBeyondTheMaximum() {
        Duration base = Duration.ofSeconds(1), max = Duration.ofMinutes(10);
        assertThat(Backoff.delay(1, Duration.ofSeconds(2), base, max)).isEqualTo(Duration.ofSeconds(2));
        assertThat(Backoff.delay(9, Duration.ofSeconds(2), base, max)).isEqualTo(Duration.ofSeconds(2));
        assertThat(Backoff.delay(1, Duration.ofHours(5), base, max)).isEqualTo(max);
    }
}
