package dev.waterline.outbox;

import dev.waterline.metrics.WaterlineMetrics;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * Samples {@code waterline_outbox_depth} and {@code waterline_outbox_oldest_age_seconds} once a
 * second. On error the gauges keep their last value until the next sample.
 */
@Component
class OutboxGauges {

    private final OutboxRepository outbox;
    private final WaterlineMetrics metrics;

    OutboxGauges(OutboxRepository outbox, WaterlineMetrics metrics) {
        this.outbox = outbox;
        this.metrics = metrics;
    }

    @Scheduled(fixedDelayString = "${waterline.outbox.sample-interval:1s}")
    void sample() {
        try {
            long[] s = outbox.stats();
            metrics.outbox(s[0], s[1]);
        }
        catch (RuntimeException e) {
            // the database is unreachable; the next sample will tell
        }
    }
}
