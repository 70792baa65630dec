package dev.waterline.ingest;

import java.time.Clock;
import java.time.Instant;

import dev.waterline.history.RetentionProperties;
import dev.waterline.lifecycle.Loops;
import org.springframework.scheduling.annotation.SchedulingConfigurer;
import org.springframework.scheduling.config.FixedDelayTask;
import org.springframework.scheduling.config.ScheduledTaskRegistrar;
import org.springframework.stereotype.Component;

/**
 * Drops idempotency keys past {@code waterline.inbound.idempotency-window}, so that a reused
 * correlationId then makes a new message.
 *
 * <p>Loop: every {@code waterline.retention.purge-interval} (the retention loops' one interval,
 * read from history's {@link RetentionProperties}, where its default is defined), delete keys older
 * than the window in chunks of 10,000 until a chunk comes back short. On error: logged and counted
 * ({@link Loops}, {@code idempotency_purge}), retried at the next run. Stops with the scheduler.
 */
@Component
class KeyRetention implements SchedulingConfigurer {

    static final String LOOP = "idempotency_purge";
    private static final int CHUNK = 10_000;

    private final InboundProperties properties;
    private final RetentionProperties retention;
    private final IngestRepository repository;
    private final Loops loops;
    private final Clock clock;

    KeyRetention(InboundProperties properties, RetentionProperties retention, IngestRepository repository, Loops loops, Clock clock) {
        this.properties = properties;
        this.retention = retention;
        this.repository = repository;
        this.loops = loops;
        this.clock = clock;
        loops.declare(LOOP);
    }

    @Override
    public void configureTasks(ScheduledTaskRegistrar tasks) {
        tasks.addFixedDelayTask(new FixedDelayTask(this::purge, retention.purgeInterval(), retention.purgeInterval()));
    }

    void purge() {
        loops.pass(LOOP, () -> {
            Instant cutoff = clock.instant().minus(properties.idempotencyWindow());
            while (repository.purgeKeysOlderThan(cutoff, CHUNK) == CHUNK) {
                // next chunk
            }
        });
    }
}
