package dev.waterline.gateway;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;

class ConnectorLimitsUnitTests {

    static GatewayProperties gateway(double share, DataSize perConnection) {
        return new GatewayProperties(DataSize.ofKilobytes(64), 4000, 256, 200, Duration.ofSeconds(10), DataSize.ofMegabytes(1),
                1000, Duration.ofSeconds(5), Duration.ofSeconds(10), perConnection, share, 0.25);
    }

    @Test
    void aSmallHeapLowersMaxConnectionsBelowWhatTheOpenFileLimitWouldAllow() {
        ConnectorLimits.Bound b = ConnectorLimits.bound(20_000, 512L << 20, gateway(0.5, DataSize.ofKilobytes(40)));
        assertThat(b.connections()).isEqualTo(6553);
        assertThat(b.why()).contains("heap");
    }

    @Test
    void aLargeHeapLeavesTheOpenFileLimitInCharge() {
        ConnectorLimits.Bound b = ConnectorLimits.bound(20_000, 8L << 30, gateway(0.5, DataSize.ofKilobytes(40)));
        assertThat(b.connections()).isEqualTo(19_000);
        assertThat(b.why()).contains("open-file limit");
    }

    @Test
    void theHeapsShareAndTheBudgetPerConnectionAreTheOperatorsToSet() {
        assertThat(ConnectorLimits.bound(1_000_000, 1L << 30, gateway(0.25, DataSize.ofKilobytes(20))).connections())
                .isEqualTo(13_107);
        assertThat(ConnectorLimits.bound(1_000_000, 1L << 20, gateway(0.5, DataSize.ofKilobytes(40))).connections())
                .as("never below 64").isEqualTo(64);
    }
}
