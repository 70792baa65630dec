package dev.waterline.history;

import java.time.Clock;

import dev.waterline.lifecycle.Loops;
import org.springframework.scheduling.annotation.SchedulingConfigurer;
import org.springframework.scheduling.config.FixedDelayTask;
import org.springframework.scheduling.config.ScheduledTaskRegistrar;
import org.springframework.stereotype.Component;

/**
 * Ages history out after {@code waterline.retention.history}.
 *
 * <p>Loop: every {@code purge-interval}, delete rows older than the cut-off in chunks of 10,000
 * until a chunk comes back short, so no single transaction holds many locks. On error: logged
 * and counted ({@link Loops}, {@code history_retention}), retried at the next run; nothing else
 * depends on it. Stops with the scheduler. Keeps I4: it only
 * ever deletes past a retention that the configuration forces to be far longer than the outbox's.
 */
@Component
class HistoryRetention implements SchedulingConfigurer {

    static final String LOOP = "history_retention";
    private static final int CHUNK = 10_000;

    private final HistoryRepository history;
    private final RetentionProperties retention;
    private final Loops loops;
    private final Clock clock;

    HistoryRetention(HistoryRepository history, RetentionProperties retention, Loops loops, Clock clock) {
        this.loops = loops;
        loops.declare(LOOP);
        this.history = history;
        this.retention = retention;
        this.clock = clock;
    }

    @Override
    public void configureTasks(ScheduledTaskRegistrar tasks) {
        tasks.addFixedDelayTask(new FixedDelayTask(this::purge, retention.purgeInterval(), retention.purgeInterval()));
    }

    void purge() {
        loops.pass(LOOP, () -> {
            var cutoff = clock.instant().minus(retention.history());
            int deleted;
            do {
                deleted = history.purgeOlderThan(cutoff, CHUNK);
            } while (deleted == CHUNK);
        });
    }
}
