package dev.waterline.outbox;

import dev.waterline.lifecycle.Loops;
import dev.waterline.metrics.WaterlineMetrics;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * Samples {@code waterline_outbox_depth} and {@code waterline_outbox_oldest_age_seconds} once a
 * second, from three primary-key probes ({@link OutboxStore#stats}: depth is the span of ids,
 * exact but for the ids of rolled-back inserts). On error (logged and counted by {@link Loops}, {@code outbox_gauges}) the gauges keep
 * their last value until the next sample.
 */
@Component
class OutboxGauges {

    static final String LOOP = "outbox_gauges";

    private final OutboxStore outbox;
    private final WaterlineMetrics metrics;
    private final Loops loops;

    OutboxGauges(OutboxStore outbox, WaterlineMetrics metrics, Loops loops) {
        this.loops = loops;
        loops.declare(LOOP);
        this.outbox = outbox;
        this.metrics = metrics;
    }

    @Scheduled(fixedDelayString = "${waterline.outbox.sample-interval:1s}")
    void sample() {
        loops.pass(LOOP, () -> {
            OutboxStore.Stats s = outbox.stats();
            metrics.outbox(s.depth(), s.oldestAgeSeconds());
        });
    }
}
