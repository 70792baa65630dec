package dev.waterline.attachments;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * {@code waterline.attachments.*}. The object store's keys, {@code waterline.attachments.s3.*}, are
 * bound by the store's adapter ({@code blobs.s3.S3Properties}): the store holds every user file, and
 * is the {@code blobs} capability's.
 *
 * @param maxBytes the largest attachment; a larger upload is {@code 413 too_large} and nothing of it
 *                 is kept. Default 25 MB (25 MiB).
 * @param orphanTtl an attachment that no {@code send} has named this long after its upload began is
 *                  deleted with its content. Default 24 h.
 * @param sweepInterval how often attachments never sent (past {@code orphan-ttl}) and uploads never
 *                      finished (past {@code waterline.blobs.upload-timeout}) are looked for. Default 1 min.
 */
@ConfigurationProperties("waterline.attachments")
public record AttachmentProperties(
        @DefaultValue("25MB") DataSize maxBytes,
        @DefaultValue("24h") Duration orphanTtl,
        @DefaultValue("1m") Duration sweepInterval) {

    public AttachmentProperties {
        if (maxBytes.toBytes() < 1) {
            throw new IllegalArgumentException("waterline.attachments.max-bytes must be positive");
        }
        if (orphanTtl.isNegative() || orphanTtl.isZero() || sweepInterval.isNegative() || sweepInterval.isZero()) {
            throw new IllegalArgumentException("waterline.attachments.orphan-ttl and sweep-interval must be positive");
        }
    }
}
