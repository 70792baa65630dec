package dev.waterline.reclaim;

import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.LongConsumer;
import java.util.function.Supplier;

import dev.waterline.history.RetentionProperties;
import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.outbox.OutboxStore;
import dev.waterline.watermark.MarkerStore;
import io.micrometer.core.instrument.Counter;
import org.springframework.stereotype.Component;

/**
 * The leader's deletes (see {@link Reclaim}'s note): it reads the line (the lowest pin over every
 * connected client, or the outbox head when no one holds a pin: offline recipients hold nothing
 * down), moves the marker on with a compare-and-set (a Redis flushed or rolled back since the
 * first read fails it, and nothing is deleted), and deletes, in bounded chunks and id order, rows
 * below the line that are older than the grace; then the age backstop deletes rows past the
 * outbox retention whatever the line. Every write to PostgreSQL is fenced by the lease's epoch: a
 * leader that lost its lease writes nothing more. The line ({@link #line}) and the chunking
 * ({@link #inChunks}) are pure.
 */
@Component
class OutboxGc {

    /** Rows deleted by a run of chunks, and whether the lease was lost on the way (then nothing more is deleted). */
    record Deleted(long rows, boolean leaseLost) {
    }

    private final ReclaimProperties properties;
    private final Duration outboxRetention;
    private final IndexStores index;
    private final OutboxStore outbox;
    private final Leadership leadership;
    private final WaterlineMetrics metrics;
    private final Clock clock;
    private final Counter reclaimedByLine;
    private final Counter reclaimedByAge;

    OutboxGc(ReclaimProperties properties, RetentionProperties retention, IndexStores index,
             OutboxStore outbox, Leadership leadership, WaterlineMetrics metrics, Clock clock) {
        this.properties = properties;
        this.outboxRetention = retention.outbox();
        this.index = index;
        this.outbox = outbox;
        this.leadership = leadership;
        this.metrics = metrics;
        this.clock = clock;
        this.reclaimedByLine = metrics.counter("waterline.outbox.reclaimed", "outbox rows deleted below the safe-delete line");
        this.reclaimedByAge = metrics.counter("waterline.outbox.reclaimed.backstop", "outbox rows deleted by the age backstop");
    }

    /** The safe-delete line: the lowest pin, never above the head; the head when no one holds a pin. */
    static long line(OptionalLong lowestPin, long head) {
        return lowestPin.isPresent() ? Math.min(lowestPin.getAsLong(), head) : head;
    }

    /**
     * Runs {@code chunk} (one fenced delete of at most {@code chunkSize} rows; empty: the lease is
     * gone) until a chunk deletes fewer than {@code chunkSize}, {@code maxChunks} have run or the
     * lease is lost, telling {@code counted} what each deleted.
     */
    static Deleted inChunks(int maxChunks, int chunkSize, Supplier<Optional<Long>> chunk, LongConsumer counted) {
        long deleted = 0;
        for (int i = 0; i < maxChunks; i++) {
            Optional<Long> rows = chunk.get();
            if (rows.isEmpty()) {
                return new Deleted(deleted, true);
            }
            deleted += rows.get();
            counted.accept(rows.get());
            if (rows.get() < chunkSize) {
                break;
            }
        }
        return new Deleted(deleted, false);
    }

    /**
     * Reads the line and moves the marker on, in Redis (compare-and-set) and then in PostgreSQL
     * (fenced). Returns the line, or empty when Redis no longer held the marker (a suspicion: the
     * pins just read prove nothing) or the lease is gone.
     */
    OptionalLong moveMarker(long epoch, MarkerStore.Marker m) {
        long line = line(index.redis().lowestPin(), outbox.head());
        long next = m.token() + 1;
        // Compare-and-set: a Redis flushed or rolled back since the first read no longer holds
        // the expected marker, and then the pins just read prove nothing.
        if (!index.redis().rotateMarker(m.token(), next)) {
            index.health().suspect();
            return OptionalLong.empty();
        }
        if (leadership.fenced(epoch, () -> {
            index.markers().token(next);
            return true;
        }).isEmpty()) {
            return OptionalLong.empty();
        }
        return OptionalLong.of(line);
    }

    /** Deletes below {@code line} past the grace, then past the outbox retention; returns rows deleted. */
    long delete(long epoch, long line) {
        metrics.safeDeleteId(line);
        Deleted byLine = inChunks(properties.maxChunksPerPass(), properties.chunk(),
                () -> leadership.fenced(epoch, () -> outbox.deleteBelow(line, properties.grace(), properties.chunk())),
                reclaimedByLine::increment);
        if (byLine.leaseLost()) {
            return byLine.rows();
        }
        Deleted byAge = inChunks(properties.maxChunksPerPass(), properties.chunk(),
                () -> leadership.fenced(epoch, () -> outbox.deleteOlderThan(clock.instant().minus(outboxRetention), properties.chunk())),
                reclaimedByAge::increment);
        long deleted = byLine.rows() + byAge.rows();
        if (!byAge.leaseLost() && deleted > 0) {
            outbox.refreshFloor();
        }
        return deleted;
    }

    /** On a node that does not lead: claims here start past what the leader deleted. */
    void refreshFloor() {
        outbox.refreshFloor();
    }
}
