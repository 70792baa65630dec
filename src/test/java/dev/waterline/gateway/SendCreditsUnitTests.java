package dev.waterline.gateway;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A connection's send credits: no more sends in flight than its limit, each answered one giving
 * its credit back; no more than its rate a second, receipts included; a send refused for its
 * in-flight credits spends none of the rate.
 */
class SendCreditsUnitTests {

    @Test
    void noMoreSendsInFlightThanTheLimitAndAnAnswerGivesOneBack() {
        SendCredits credits = new SendCredits(2, 1000);

        assertThat(credits.admitSend()).isTrue();
        assertThat(credits.admitSend()).isTrue();
        assertThat(credits.admitSend()).as("a third in flight").isFalse();
        credits.answered();
        assertThat(credits.admitSend()).isTrue();
        assertThat(credits.admitSend()).isFalse();
    }

    @Test
    void noMoreThanTheRateASecondReceiptsIncluded() {
        SendCredits credits = new SendCredits(100, 3);

        assertThat(credits.admitRate()).isTrue();
        assertThat(credits.admitSend()).isTrue();
        assertThat(credits.admitSend()).isTrue();
        assertThat(credits.admitSend()).as("past the rate").isFalse();
        assertThat(credits.admitRate()).isFalse();
    }

    @Test
    void aSendRefusedForItsInFlightCreditsSpendsNoneOfTheRate() {
        SendCredits credits = new SendCredits(1, 2);

        assertThat(credits.admitSend()).isTrue();
        assertThat(credits.admitSend()).as("one in flight already").isFalse();
        assertThat(credits.admitRate()).as("the second token still there").isTrue();
        assertThat(credits.admitRate()).isFalse();
    }
}
