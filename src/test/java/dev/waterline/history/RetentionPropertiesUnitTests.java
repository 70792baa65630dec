package dev.waterline.history;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** I4: history must outlive the outbox by far, or a returning client could find nothing. */
class RetentionPropertiesUnitTests {

    @Test
    void theDefaultsKeepHistoryEightyThreeTimesLongerThanTheOutbox() {
        RetentionProperties defaults = new RetentionProperties(Duration.ofDays(90), Duration.ofHours(26), Duration.ofMinutes(1));
        assertThat(defaults.history().dividedBy(defaults.outbox())).isEqualTo(83);
    }

    @Test
    void aHistoryRetentionNotFarBeyondTheOutboxIsRefusedAtStartup() {
        assertThatThrownBy(() -> new RetentionProperties(Duration.ofHours(30), Duration.ofHours(26), Duration.ofMinutes(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("I4");
    }
}
