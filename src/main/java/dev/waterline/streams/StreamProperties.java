package dev.waterline.streams;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * {@code waterline.streams.*} (PROTOCOL.md §6).
 *
 * @param maxChunkChars longest {@code data} of one chunk, in characters. Default 16384.
 * @param maxBlobBytes largest blob one upload may hold; larger is {@code 413 too_large}. Default 32 MiB.
 * @param maxChunksPerRequest most chunks one append carries. Default 1000.
 * @param idleTimeout a stream left open with no append (nor its opening) for this long is aborted
 *                    by the server. Default 10 min.
 * @param idleCheckInterval how often the idle reaper looks. Default 5 s.
 * @param queueSize appends (and completions) waiting to be committed, split evenly between the
 *                  writers; past it an append is answered {@code overloaded}. Default 8000.
 * @param batchSize most appends one transaction carries. Default 256.
 * @param linger how long a batch of appends waits for company after its first. Default 2 ms.
 * @param writers concurrent append transactions; streams are spread over them by id, so a stream's
 *                appends commit in the order they arrived. Default 2.
 * @param commitTimeout longest one append transaction may take; past it the batch rolls back and
 *                      is answered {@code unavailable}. Default 10 s.
 * @param pageSize chunks per page a subscriber's replay reads. Default 1000.
 * @param tailPollInterval how often this node reads the last seq and state of every stream it has
 *                         subscribers for (one query for all): a chunk appended on another node
 *                         whose Redis signal was lost reaches them within two of these.
 *                         Default 1 s.
 * @param maxSubscriptionsPerConnection streams one WebSocket connection may follow at once; more is
 *                                      {@code rate_limited}. Default 1000.
 * @param subscriberBufferChars characters of chunks a subscriber's replay lets wait in its
 *                              connection before it reads the next page (the connection itself
 *                              withdraws a client past {@code waterline.gateway.send-buffer-limit}).
 *                              Default 256 Ki.
 * @param partitionWidth time covered by one partition of the chunk table: {@code 1h} or {@code 1d}.
 *                       Default 1 d.
 * @param partitionsAhead partitions kept created beyond the current one. Default 3.
 * @param maintenanceInterval how often partitions are created ahead and dropped past retention
 *                            ({@code waterline.retention.history}). Default 10 min.
 * @param devBots whether {@code POST /api/dev/bots/echo} answers (otherwise 404). Default false; the
 *                zero-configuration mode turns it on.
 */
@ConfigurationProperties("waterline.streams")
public record StreamProperties(
        @DefaultValue("16384") int maxChunkChars,
        @DefaultValue("32MB") DataSize maxBlobBytes,
        @DefaultValue("1000") int maxChunksPerRequest,
        @DefaultValue("10m") Duration idleTimeout,
        @DefaultValue("5s") Duration idleCheckInterval,
        @DefaultValue("8000") int queueSize,
        @DefaultValue("256") int batchSize,
        @DefaultValue("2ms") Duration linger,
        @DefaultValue("2") int writers,
        @DefaultValue("10s") Duration commitTimeout,
        @DefaultValue("1000") int pageSize,
        @DefaultValue("1s") Duration tailPollInterval,
        @DefaultValue("1000") int maxSubscriptionsPerConnection,
        @DefaultValue("262144") long subscriberBufferChars,
        @DefaultValue("1d") Duration partitionWidth,
        @DefaultValue("3") int partitionsAhead,
        @DefaultValue("10m") Duration maintenanceInterval,
        @DefaultValue("false") boolean devBots) {

    public StreamProperties {
        if (!partitionWidth.equals(Duration.ofHours(1)) && !partitionWidth.equals(Duration.ofDays(1))) {
            throw new IllegalArgumentException("waterline.streams.partition-width must be 1h or 1d: " + partitionWidth);
        }
        if (partitionsAhead < 1) {
            throw new IllegalArgumentException("waterline.streams.partitions-ahead must be at least 1");
        }
        if (writers < 1 || batchSize < 1 || queueSize < writers || pageSize < 1 || maxChunksPerRequest < 1) {
            throw new IllegalArgumentException("waterline.streams: writers, batch-size, page-size and max-chunks-per-request"
                    + " must be positive and queue-size at least writers");
        }
    }
}
