package dev.waterline.blobs;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.web.ApiException;
import dev.waterline.web.Pace;
import io.micrometer.core.instrument.Counter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Component;

/**
 * Uploads and downloads of file contents, each within a turn of {@link Transfers} and a part at a
 * time through the {@link BlobStore}. The owner of a file (a stream's blob, an attachment) checks
 * who may do what before any byte of a body is read, keeps the file's description (type, size,
 * digest) in its own row, and deletes that row to have the content removed ({@link BlobRemovals}).
 */
@Component
public class Blobs {

    private static final org.apache.commons.logging.Log log = org.apache.commons.logging.LogFactory.getLog(Blobs.class);

    /** What was stored: its size and its SHA-256 (hex). */
    public record Stored(long size, String sha256) {
    }

    /** An upload that took longer than half of {@code upload-timeout}: the sweep of abandoned uploads may take its row. */
    public static final class TooLong extends IOException {
        TooLong(long seconds) {
            super("the upload took longer than " + seconds + " s", null);
        }
    }

    /** A body longer than its limit: nothing of it is kept. */
    public static final class TooLarge extends IOException {
        TooLarge(long max) {
            super("the file is larger than " + max + " bytes", null);
        }
    }

    private final BlobStore store;
    private final BlobProperties properties;
    private final Transfers transfers;
    private final BlobRemovals removals;
    private final Counter bytesIn;
    private final Counter bytesOut;
    private final Counter tooSlow;
    private final Counter cutShort;

    Blobs(BlobStore store, BlobProperties properties, Transfers transfers, BlobRemovals removals, WaterlineMetrics metrics) {
        this.store = store;
        this.properties = properties;
        this.transfers = transfers;
        this.removals = removals;
        this.bytesIn = metrics.counter("waterline.blob.bytes", "bytes of file contents stored and served", "direction", "in");
        this.bytesOut = metrics.counter("waterline.blob.bytes", "bytes of file contents stored and served", "direction", "out");
        this.tooSlow = metrics.counter("waterline.blob.transfers.aborted", "transfers cut off before their end", "outcome", "too_slow");
        this.cutShort = metrics.counter("waterline.blob.transfers.aborted", "transfers cut off before their end", "outcome", "broken");
    }

    /**
     * Stores {@code body} under {@code key}, at most {@code max} bytes, within a transfer's turn.
     * Throws {@link TooLarge} past {@code max}, and whatever reading the body throws; then the
     * caller deletes its owner row, which queues the removal of whatever was stored.
     */
    public Stored receive(String key, String user, InputStream body, long max) throws IOException {
        try (Transfers.Turn turn = transfers.begin(user)) {
            // an upload ends well before the sweep of abandoned uploads could take its row for one
            Metered in = new Metered(body, max, pace(), System.nanoTime() + properties.uploadTimeout().toNanos() / 2,
                    properties.uploadTimeout().toSeconds() / 2);
            store.write(key, in);
            bytesIn.increment(in.count);
            return new Stored(in.count, HexFormat.of().formatHex(in.digest.digest()));
        }
        catch (Pace.TooSlow | TooLong slow) {
            tooSlow.increment();
            throw slow;
        }
        catch (TooLarge | dev.waterline.web.BodyTooLarge large) {
            throw large;
        }
        catch (IOException broken) {
            cutShort.increment();
            throw broken;
        }
    }

    /**
     * Queues the removal of whatever {@code key} stored, whether or not its owner row is still
     * there to queue it (an upload that failed, or whose row the sweep took meanwhile), and asks
     * the removal loop for a pass soon.
     */
    public void discard(String key) {
        removals.queue(key);
        removals.wake();
    }

    /** A file as its owner describes it. */
    public record File(String key, long size, String sha256, String contentType, String fileName) {
    }

    /**
     * Answers {@code file} as user content ({@link UserContent}): its safe type, a strong
     * {@code ETag} (its digest; {@code If-None-Match} answers 304), and one {@code Range}
     * (206, or 416 past the end); the bytes a part at a time, within a transfer's turn.
     */
    public void send(File file, String user, HttpServletRequest request, HttpServletResponse response) throws IOException {
        String etag = "\"" + file.sha256() + "\"";
        UserContent.protect(response, file.fileName());
        String match = request.getHeader(HttpHeaders.IF_NONE_MATCH);
        if (match != null && (match.strip().equals("*") || java.util.Arrays.stream(match.split(",")).map(String::strip)
                .map(t -> t.startsWith("W/") ? t.substring(2) : t).anyMatch(etag::equals))) {
            cacheable(response, etag);
            response.setStatus(HttpStatus.NOT_MODIFIED.value());
            return;
        }
        UserContent.Ranged asked = UserContent.range(request.getHeader(HttpHeaders.RANGE), file.size());
        if (asked instanceof UserContent.Ranged.Unsatisfiable) {
            response.setHeader(HttpHeaders.CONTENT_RANGE, "bytes */" + file.size());
            throw new ApiException(HttpStatus.REQUESTED_RANGE_NOT_SATISFIABLE, "invalid", "the range is past the end of the file");
        }
        UserContent.Range range = asked instanceof UserContent.Ranged.Part p ? p.range() : new UserContent.Range(0, file.size());
        boolean body = range.length() > 0 && !"HEAD".equals(request.getMethod());
        // the turn first: a refusal (503) must not carry the file's headers
        try (Transfers.Turn turn = body ? transfers.begin(user) : () -> { }) {
            cacheable(response, etag);
            response.setHeader(HttpHeaders.ACCEPT_RANGES, "bytes");
            if (asked instanceof UserContent.Ranged.Part) {
                response.setStatus(HttpStatus.PARTIAL_CONTENT.value());
                response.setHeader(HttpHeaders.CONTENT_RANGE, "bytes " + range.from() + "-" + (range.to() - 1) + "/" + file.size());
            }
            else {
                response.setStatus(HttpStatus.OK.value());
            }
            response.setContentType(UserContent.servedAs(file.contentType()).toString());
            response.setContentLengthLong(range.length());
            if (!body) {
                return;
            }
            // A transfer cut off mid-body (too slow, or the store failed) must not leave a kept-alive
            // connection whose next bytes the client would read as the rest of this body: it closes.
            response.setHeader(HttpHeaders.CONNECTION, "close");
            OutputStream out = response.getOutputStream();
            store.read(file.key(), range.from(), range.to(), new CountingOut(out, pace()));
            out.flush();
        }
        catch (Pace.TooSlow slow) {
            // the client reads too slowly to keep its turn: the answer ends here, short of its
            // Content-Length, and the connection closes; the client may ask again with a Range
            tooSlow.increment();
        }
        catch (IOException | RuntimeException broken) {
            if (!response.isCommitted()) {
                throw broken;
            }
            // mid-body: the client went away, or the store failed (the database, the file removed
            // meanwhile); the answer ends short and its connection closes, and there is nobody to tell
            cutShort.increment();
            log.debug("a file's answer was cut short: " + broken);
        }
    }

    private static void cacheable(HttpServletResponse response, String etag) {
        response.setHeader(HttpHeaders.ETAG, etag);
        response.setHeader(HttpHeaders.CACHE_CONTROL, "private, max-age=31536000, immutable");
    }

    private Pace pace() {
        return new Pace(properties.slowTransferGrace().toNanos(), properties.minTransferRate().toBytes());
    }

    /** Counts, digests, bounds and paces what is read of a body, and ends it at its deadline. */
    private static final class Metered extends FilterInputStream {
        final MessageDigest digest = sha256();
        final long max;
        final Pace pace;
        final long deadlineNanos;
        final long deadlineSeconds;
        long count;

        Metered(InputStream in, long max, Pace pace, long deadlineNanos, long deadlineSeconds) {
            super(in);
            this.max = max;
            this.pace = pace;
            this.deadlineNanos = deadlineNanos;
            this.deadlineSeconds = deadlineSeconds;
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b >= 0) {
                took(new byte[] {(byte) b}, 0, 1);
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = super.read(b, off, len);
            if (n > 0) {
                took(b, off, n);
            }
            return n;
        }

        private void took(byte[] b, int off, int n) throws IOException {
            count += n;
            if (count > max) {
                throw new TooLarge(max);
            }
            digest.update(b, off, n);
            pace.moved(n);
            if (System.nanoTime() > deadlineNanos) {
                throw new TooLong(deadlineSeconds);
            }
        }
    }

    /** Counts and paces what is written to a client, in pieces of 16 KiB so that a slow reader is judged as it goes. */
    private final class CountingOut extends java.io.FilterOutputStream {
        private final Pace pace;
        private long count;

        CountingOut(OutputStream out, Pace pace) {
            super(out);
            this.pace = pace;
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            for (int at = off, end = off + len; at < end; ) {
                int n = Math.min(16 * 1024, end - at);
                out.write(b, at, n);
                at += n;
                count += n;
                bytesOut.increment(n);
                pace.moved(n);
            }
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        }
        catch (NoSuchAlgorithmException impossible) {
            throw new IllegalStateException(impossible);
        }
    }
}
