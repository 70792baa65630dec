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
 * @param maxTransfersPerUser of those, most that one user may hold at once (the rest of theirs wait
 *                            their turn). Default 4.
 * @param transferWait how long a transfer waits for its turn before it is answered {@code 503
 *                     unavailable} with {@code Retry-After}. Default 30 s.
 * @param uploadTimeout an upload still unfinished this long after it began (its client went away, its
 *                      node died) is abandoned and its parts removed; an upload itself is cut off
 *                      (408) at half of it, so the sweep never takes one still under way. Default 1 h.
 * @param removalInterval how often the removal ledger is read. Default 5 s.
 * @param minTransferRate the slowest a transfer may go (bytes a second, over each window of
 *                        {@code slow-transfer-grace}): a client that reads or sends slower gives its
 *                        turn back (the connection is closed), so that a few slow clients cannot
 *                        hold every turn. Default 32 KB, i.e. about 17 minutes for a 32 MiB file.
 * @param slowTransferGrace the window the pace is judged over: every such window of a transfer must
 *                          move {@code min-transfer-rate} × its length. Default 30 s.
 */
@ConfigurationProperties("waterline.blobs")
public record BlobProperties(
        @DefaultValue("16") int maxConcurrentTransfers,
        @DefaultValue("4") int maxTransfersPerUser,
        @DefaultValue("30s") Duration transferWait,
        @DefaultValue("1h") Duration uploadTimeout,
        @DefaultValue("5s") Duration removalInterval,
        @DefaultValue("32KB") org.springframework.util.unit.DataSize minTransferRate,
        @DefaultValue("30s") Duration slowTransferGrace) {

    public BlobProperties {
        if (maxConcurrentTransfers < 1 || maxTransfersPerUser < 1) {
            throw new IllegalArgumentException("waterline.blobs.max-concurrent-transfers and max-transfers-per-user must be positive");
        }
        if (minTransferRate.toBytes() < 1) {
            throw new IllegalArgumentException("waterline.blobs.min-transfer-rate must be positive: an upload must end before"
                    + " the sweep of abandoned uploads (upload-timeout) could take it");
        }
    }
}
