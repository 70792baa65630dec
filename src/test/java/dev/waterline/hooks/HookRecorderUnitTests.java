package dev.waterline.hooks;

import java.time.Clock;
import java.util.List;
import java.util.Map;

import dev.waterline.lifecycle.FatalErrors;
import dev.waterline.lifecycle.Loops;
import dev.waterline.metrics.WaterlineMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The recorder's promise that no outcome slips unsaid: one handed in after it stopped, or left in
 * its queue at shutdown, is counted in {@code waterline.hook.outcomes.unrecorded}. Nothing here
 * reaches the database (the queue is never asked to record).
 */
class HookRecorderUnitTests {

    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    final WaterlineMetrics metrics = new WaterlineMetrics(registry);
    final Loops loops = new Loops(metrics, new FatalErrors((where, error) -> { }));
    final SimpleDriverDataSource nowhere = new SimpleDriverDataSource();
    final DeliveryQueueRepository queue = new DeliveryQueueRepository(nowhere, new DataSourceTransactionManager(nowhere));
    final HookRecorder recorder = new HookRecorder(queue, AddressGuardUnitTests.allowing(), new HookMetrics(metrics), loops,
            Clock.systemUTC(), "node/1", hook -> { });

    static DeliveryQueueRepository.Claimed claimed(long id) {
        return new DeliveryQueueRepository.Claimed(id, new DeliveryQueueRepository.Hook("h", "c", "http", Map.of(), null, "u"),
                "h:m" + id, "{}", 1, 0, false);
    }

    double unrecorded() {
        return registry.get("waterline.hook.outcomes.unrecorded").counter().count();
    }

    @Test
    void anOutcomeHandedInAfterTheRecorderStoppedIsCountedNotDroppedUnsaid() {
        recorder.stopAccepting();
        recorder.release(claimed(1));
        recorder.release(claimed(2));
        assertThat(unrecorded()).isEqualTo(2.0);
        recorder.drop();
        assertThat(unrecorded()).as("each counted once").isEqualTo(2.0);
    }

    @Test
    void theBreakersNotClosedFollowWhatTheDatabaseSays() {
        recorder.breakersNotClosed(List.of("a", "b"));
        recorder.breakersNotClosed(List.of("b", "c"));
        assertThat(recorder.notClosed()).containsExactlyInAnyOrder("b", "c");
    }
}
