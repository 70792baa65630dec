package dev.waterline.delivery;

import java.time.Duration;
import java.util.List;

import dev.waterline.lifecycle.FatalErrors;
import dev.waterline.lifecycle.Loops;
import dev.waterline.metrics.WaterlineMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static dev.waterline.delivery.RowJudgeUnitTests.row;
import static org.assertj.core.api.Assertions.assertThat;

class PollerWritersUnitTests {

    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    final WaterlineMetrics metrics = new WaterlineMetrics(registry);
    final Loops loops = new Loops(metrics, new FatalErrors((where, error) -> { }));
    final PollerWriters writers = new PollerWriters(
            new DeliveryProperties(true, 8000, 1, 6000, 2, Duration.ofSeconds(10), Duration.ofMillis(100)), metrics, loops);

    @Test
    void framesPastTheBuffersRoomAreRefusedAndCounted() {
        int refused = writers.write(new RowJudgeUnitTests.Session("bob", "s-1"), List.of(row(1, 0), row(2, 0), row(3, 0)));

        assertThat(refused).isEqualTo(1);
        assertThat(writers.room()).isZero();
        assertThat(registry.get("waterline.poller.queue.refused").counter().count()).isEqualTo(1);
        assertThat(registry.get("waterline.poller.queue.depth").gauge().value()).isEqualTo(2);
    }

    @Test
    void theRefusalCounterShowsZeroFromStart() {
        assertThat(registry.get("waterline.poller.queue.refused").counter().count()).isZero();
        assertThat(writers.idle()).isTrue();
    }
}
