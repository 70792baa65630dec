package dev.waterline.blobs.s3;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * {@code waterline.attachments.s3.*} (the keys PROTOCOL.md §9 names): the S3-compatible object
 * store that holds every user file once {@code bucket} or {@code endpoint} is set
 * ({@link dev.waterline.blobs.StoreChoice}). Bound here, by the store's own package, and not in the
 * attachments' properties: the store is the {@code blobs} capability's, which {@code attachments}
 * calls, and a binding the other way round would be a cycle.
 *
 * @param endpoint the store's URL (MinIO, Ceph, a cloud's S3 API); none: AWS S3 of {@code region}.
 * @param region the region requests are signed for. Default {@code us-east-1}.
 * @param bucket the bucket, which must exist; required once the store is configured.
 * @param accessKey with {@code secret-key}, the credentials; none: the SDK's default chain
 *                  (environment, profile, instance role).
 * @param secretKey see {@code access-key}.
 * @param pathStyle address the bucket as a path ({@code endpoint/bucket/key}, as most S3-compatible
 *                  servers want) rather than as a host name. Default false.
 * @param partSize the size of each part of a multipart upload (S3's minimum, 5 MB, and more); a
 *                 smaller file is one PUT. Each transfer spools one part to a temporary file, never
 *                 to the heap. Default 8 MB.
 */
@ConfigurationProperties("waterline.attachments.s3")
public record S3Properties(
        String endpoint,
        @DefaultValue("us-east-1") String region,
        String bucket,
        String accessKey,
        String secretKey,
        @DefaultValue("false") boolean pathStyle,
        @DefaultValue("8MB") DataSize partSize) {

    /** S3 refuses a part other than the last below 5 MiB. */
    static final long MIN_PART_BYTES = 5L * 1024 * 1024;

    public S3Properties {
        if (partSize.toBytes() < MIN_PART_BYTES) {
            throw new IllegalArgumentException("waterline.attachments.s3.part-size must be at least 5MB (S3's smallest part)");
        }
        if ((accessKey == null || accessKey.isBlank()) != (secretKey == null || secretKey.isBlank())) {
            throw new IllegalArgumentException("waterline.attachments.s3.access-key and secret-key go together: set both or neither");
        }
    }
}
