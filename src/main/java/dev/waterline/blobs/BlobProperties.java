package dev.waterline.blobs;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code waterline.blobs.*}.
 *
 * @param maxConcurrentTransfers uploads and downloads of file contents in progress at once on this
 *                               node, all users together; each holds about one part (256 KiB, a
 *                               little over twice that while the driver decodes it) of the heap
 *                               and one database turn per part. Default 16.
 * @param transferWait how long a transfer waits for its turn before it is answered {@code 503
 *                     unavailable} with {@code Retry-After}. Default 30 s.
 * @param uploadTimeout an upload still unfinished this long after it began (its client went away, its
 *                      node died) is abandoned and its parts removed. Default 1 h.
 * @param removalInterval how often the removal ledger is read. Default 5 s.
 * @param minTransferRate the slowest a transfer may go, on average, once {@code slow-transfer-grace}
 *                        has passed (bytes a second): a client that reads or sends slower gives its
 *                        turn back (the connection is closed), so that a few slow clients cannot
 *                        hold every turn. Default 32 KB, i.e. about 17 minutes for a 32 MiB file.
 * @param slowTransferGrace how long a transfer may go at any speed before its average is judged. Default 30 s.
 */
@ConfigurationProperties("waterline.blobs")
public record BlobProperties(
        @DefaultValue("16") int maxConcurrentTransfers,
        @DefaultValue("30s") Duration transferWait,
        @DefaultValue("1h") Duration uploadTimeout,
        @DefaultValue("5s") Duration removalInterval,
        @DefaultValue("32KB") org.springframework.util.unit.DataSize minTransferRate,
        @DefaultValue("30s") Duration slowTransferGrace) {

    public BlobProperties {
        if (maxConcurrentTransfers < 1) {
            throw new IllegalArgumentException("waterline.blobs.max-concurrent-transfers must be positive");
        }
    }
}
