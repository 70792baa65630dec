package dev.waterline.blobs.s3;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import dev.waterline.blobs.BlobStore;
import dev.waterline.blobs.StoreChoice;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.context.annotation.Conditional;
import org.springframework.stereotype.Component;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.MultipartUpload;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;

/**
 * File contents in an S3-compatible object store, one object per key in
 * {@code waterline.attachments.s3.bucket}: the adapter of {@link BlobStore} chosen for every user
 * file (a stream's blobs and the attachments alike, one store for all) when
 * {@code waterline.attachments.s3.bucket} or {@code endpoint} is set, {@code PostgresBlobStore}
 * otherwise ({@link StoreChoice}; exactly one of the two is a bean).
 *
 * <p>Write: S3 must know the length of each request body before it is sent, and a body's length is
 * not known while it arrives (chunked, or cut short), so the client's bytes are spooled one part
 * ({@code part-size}) at a time to a temporary file through a 64 KiB buffer, and each part is sent
 * from its file: a file of one part is one {@code PutObject}, a longer one a multipart upload, aborted
 * if the body breaks off or grows past its limit. A transfer holds 64 KiB of heap and one part of
 * disk, never the file. Read: one ranged {@code GetObject}, copied to the client 64 KiB at a time
 * (and aborted, not drained, if the client goes away). Delete: {@code DeleteObject}, which S3 answers
 * alike whether or not the object exists, and the abort of any multipart upload of the key left by
 * a node that died mid-write (S3 would keep its parts, and bill them, forever).
 *
 * <p>Checksums are asked for only where S3 requires them (the SDK's default since 2.30 adds CRC
 * trailers that several S3-compatible servers refuse); each part is signed over HTTP and sent over
 * TLS otherwise, and the server keeps its own SHA-256 of the whole file.
 */
@Component
@Conditional(StoreChoice.ObjectStore.class)
class S3BlobStore implements BlobStore, DisposableBean {

    private static final int BUFFER = 64 * 1024;

    private final S3Client s3;
    private final String bucket;
    private final long partBytes;

    S3BlobStore(S3Properties properties) {
        if (properties.bucket() == null || properties.bucket().isBlank()) {
            throw new IllegalArgumentException("waterline.attachments.s3.bucket is required once the object store is configured"
                    + " (waterline.attachments.s3.endpoint is set)");
        }
        this.s3 = client(properties);
        this.bucket = properties.bucket();
        this.partBytes = properties.partSize().toBytes();
    }

    static S3Client client(S3Properties p) {
        AwsCredentialsProvider credentials = p.accessKey() == null || p.accessKey().isBlank()
                ? DefaultCredentialsProvider.builder().build()
                : StaticCredentialsProvider.create(AwsBasicCredentials.create(p.accessKey(), p.secretKey()));
        S3ClientBuilder builder = S3Client.builder()
                .region(Region.of(p.region()))
                .credentialsProvider(credentials)
                .forcePathStyle(p.pathStyle())
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED);
        if (p.endpoint() != null && !p.endpoint().isBlank()) {
            builder.endpointOverride(URI.create(p.endpoint()));
        }
        return builder.build();
    }

    @Override
    public void write(String key, InputStream in) throws IOException {
        Path spool = Files.createTempFile("waterline-part-", ".tmp");
        String uploadId = null;
        try {
            List<CompletedPart> parts = new ArrayList<>();
            byte[] buffer = new byte[BUFFER];
            for (int number = 1; ; number++) {
                long filled = spool(in, spool, buffer);
                if (number == 1 && filled < partBytes) {
                    s3.putObject(b -> b.bucket(bucket).key(key).contentLength(filled), RequestBody.fromFile(spool));
                    return;
                }
                if (uploadId == null) {
                    uploadId = s3.createMultipartUpload(b -> b.bucket(bucket).key(key)).uploadId();
                }
                if (filled > 0) {
                    String id = uploadId;
                    int n = number;
                    String etag = s3.uploadPart(b -> b.bucket(bucket).key(key).uploadId(id).partNumber(n).contentLength(filled),
                            RequestBody.fromFile(spool)).eTag();
                    parts.add(CompletedPart.builder().partNumber(number).eTag(etag).build());
                }
                if (filled < partBytes) {
                    String id = uploadId;
                    s3.completeMultipartUpload(b -> b.bucket(bucket).key(key).uploadId(id).multipartUpload(m -> m.parts(parts)));
                    uploadId = null;
                    return;
                }
            }
        }
        catch (IOException | RuntimeException failed) {
            if (uploadId != null) {
                abort(key, uploadId, failed);
            }
            throw failed;
        }
        finally {
            Files.deleteIfExists(spool);
        }
    }

    /** Copies up to one part of {@code in} into {@code spool} (replacing what it held); returns how many bytes. */
    private long spool(InputStream in, Path spool, byte[] buffer) throws IOException {
        long filled = 0;
        try (OutputStream out = Files.newOutputStream(spool)) {
            while (filled < partBytes) {
                int n = in.read(buffer, 0, (int) Math.min(buffer.length, partBytes - filled));
                if (n < 0) {
                    break;
                }
                out.write(buffer, 0, n);
                filled += n;
            }
        }
        return filled;
    }

    private void abort(String key, String uploadId, Exception cause) {
        try {
            s3.abortMultipartUpload(b -> b.bucket(bucket).key(key).uploadId(uploadId));
        }
        catch (RuntimeException notAborted) {
            // the write fails with its own cause; the removal of the key (queued by the caller) aborts it again
            cause.addSuppressed(notAborted);
        }
    }

    @Override
    public void read(String key, long from, long to, OutputStream out) throws IOException {
        if (to <= from) {
            return;
        }
        ResponseInputStream<GetObjectResponse> in;
        try {
            in = s3.getObject(b -> b.bucket(bucket).key(key).range("bytes=" + from + "-" + (to - 1)));
        }
        catch (NoSuchKeyException gone) {
            throw new IOException(key + " is missing: the file was removed while it was read", gone);
        }
        boolean whole = false;
        try {
            byte[] buffer = new byte[BUFFER];
            long left = to - from;
            while (left > 0) {
                int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
                if (n < 0) {
                    throw new IOException(key + " ended " + left + " bytes short of the range asked");
                }
                out.write(buffer, 0, n);
                left -= n;
            }
            whole = true;
        }
        finally {
            if (!whole) {
                // closing would read the rest of the object first: drop the connection instead
                in.abort();
            }
            in.close();
        }
    }

    @Override
    public void delete(String key) {
        for (MultipartUpload left : s3.listMultipartUploads(b -> b.bucket(bucket).prefix(key)).uploads()) {
            if (left.key().equals(key)) {
                s3.abortMultipartUpload(b -> b.bucket(bucket).key(key).uploadId(left.uploadId()));
            }
        }
        s3.deleteObject(b -> b.bucket(bucket).key(key));
    }

    @Override
    public void destroy() {
        s3.close();
    }
}
