package dev.waterline.reaper;

import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class AttemptsReaperUnitTests {

    final AttemptsReaper.Verdict verdict = new AttemptsReaper.Verdict(3);

    @Test
    void aRecipientWhosePendingRowsAreUnderTheLimitIsSpared() {
        assertThat(verdict.withdraws(IntStream.of(0, 1, 2))).isFalse();
    }

    @Test
    void oneRowReSentMaxDeliveryAttemptsTimesWithdrawsTheRecipient() {
        assertThat(verdict.withdraws(IntStream.of(0, 3, 1))).isTrue();
        assertThat(verdict.withdraws(IntStream.of(7))).isTrue();
    }

    @Test
    void noPendingRowsWithdrawNoOne() {
        assertThat(verdict.withdraws(IntStream.empty())).isFalse();
    }

    @Test
    void theReasonNamesTheLimit() {
        assertThat(verdict.reason()).contains("re-sent 3 times without an ack");
    }
}
