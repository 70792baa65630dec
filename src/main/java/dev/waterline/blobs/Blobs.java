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

    /** What was stored: its size and its SHA-256 (hex). */
    public record Stored(long size, String sha256) {
    }

    /** A transfer slower than {@code min-transfer-rate} after its grace: its turn is given back. */
    public static final class TooSlow extends IOException {
        TooSlow(long bytes, long seconds) {
            super("the transfer went too slowly (" + bytes + " bytes in " + seconds + " s)", null);
        }
    }

    /** Judges a transfer's pace: after the grace, its average rate must stay above the minimum. */
    static final class Pace {
        private final long start = System.nanoTime();
        private final long graceNanos;
        private final long minPerSecond;

        Pace(long graceNanos, long minPerSecond) {
            this.graceNanos = graceNanos;
            this.minPerSecond = minPerSecond;
        }

        void check(long bytes) throws TooSlow {
            long elapsed = System.nanoTime() - start;
            if (elapsed > graceNanos && bytes < (double) minPerSecond * elapsed / 1e9) {
                throw new TooSlow(bytes, elapsed / 1_000_000_000L);
            }
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
        this.tooSlow = metrics.counter("waterline.blob.transfers.aborted", "transfers cut off before their end", "reason", "too_slow");
        this.cutShort = metrics.counter("waterline.blob.transfers.aborted", "transfers cut off before their end", "reason", "broken");
    }

    /**
     * Stores {@code body} under {@code key}, at most {@code max} bytes, within a transfer's turn.
     * Throws {@link TooLarge} past {@code max}, and whatever reading the body throws; then the
     * caller deletes its owner row, which queues the removal of whatever was stored.
     */
    public Stored receive(String key, InputStream body, long max) throws IOException {
        try (Transfers.Turn turn = transfers.begin()) {
            Metered in = new Metered(body, max, pace());
            store.write(key, in);
            bytesIn.increment(in.count);
            return new Stored(in.count, HexFormat.of().formatHex(in.digest.digest()));
        }
        catch (TooSlow slow) {
            tooSlow.increment();
            throw slow;
        }
        catch (TooLarge large) {
            throw large;
        }
        catch (IOException broken) {
            cutShort.increment();
            throw broken;
        }
    }

    /** Asks the removal loop for a pass soon: an owner row was just deleted. */
    public void removedSoon() {
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
    public void send(File file, HttpServletRequest request, HttpServletResponse response) throws IOException {
        String etag = "\"" + file.sha256() + "\"";
        UserContent.protect(response, file.fileName());
        response.setHeader(HttpHeaders.ETAG, etag);
        response.setHeader(HttpHeaders.CACHE_CONTROL, "private, max-age=31536000, immutable");
        response.setHeader(HttpHeaders.ACCEPT_RANGES, "bytes");
        String match = request.getHeader(HttpHeaders.IF_NONE_MATCH);
        if (match != null && (match.strip().equals("*") || java.util.Arrays.stream(match.split(",")).map(String::strip)
                .map(t -> t.startsWith("W/") ? t.substring(2) : t).anyMatch(etag::equals))) {
            response.setStatus(HttpStatus.NOT_MODIFIED.value());
            return;
        }
        UserContent.Range range = new UserContent.Range(0, file.size());
        switch (UserContent.range(request.getHeader(HttpHeaders.RANGE), file.size())) {
            case UserContent.Ranged.Whole w -> response.setStatus(HttpStatus.OK.value());
            case UserContent.Ranged.Part p -> {
                range = p.range();
                response.setStatus(HttpStatus.PARTIAL_CONTENT.value());
                response.setHeader(HttpHeaders.CONTENT_RANGE, "bytes " + range.from() + "-" + (range.to() - 1) + "/" + file.size());
            }
            case UserContent.Ranged.Unsatisfiable u -> {
                response.setHeader(HttpHeaders.CONTENT_RANGE, "bytes */" + file.size());
                throw new ApiException(HttpStatus.REQUESTED_RANGE_NOT_SATISFIABLE, "invalid", "the range is past the end of the file");
            }
        }
        response.setContentType(UserContent.servedAs(file.contentType()).toString());
        response.setContentLengthLong(range.length());
        if (range.length() == 0 || "HEAD".equals(request.getMethod())) {
            return;
        }
        // A transfer cut off mid-body (too slow, or the store failed) must not leave a kept-alive
        // connection whose next bytes the client would read as the rest of this body: it closes.
        response.setHeader(HttpHeaders.CONNECTION, "close");
        try (Transfers.Turn turn = transfers.begin()) {
            OutputStream out = response.getOutputStream();
            store.read(file.key(), range.from(), range.to(), new CountingOut(out, pace()));
            out.flush();
        }
        catch (TooSlow slow) {
            // the client reads too slowly to keep its turn: the answer ends here, short of its
            // Content-Length, and the connection closes; the client may ask again with a Range
            tooSlow.increment();
        }
        catch (IOException broken) {
            // the client went away (or the store lost the file mid-read): nobody is left to tell
            cutShort.increment();
        }
    }

    private Pace pace() {
        return new Pace(properties.slowTransferGrace().toNanos(), properties.minTransferRate().toBytes());
    }

    /** Counts, digests, bounds and paces what is read of a body. */
    private static final class Metered extends FilterInputStream {
        final MessageDigest digest = sha256();
        final long max;
        final Pace pace;
        long count;

        Metered(InputStream in, long max, Pace pace) {
            super(in);
            this.max = max;
            this.pace = pace;
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
            pace.check(count);
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
                pace.check(count);
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
