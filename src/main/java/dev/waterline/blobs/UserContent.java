package dev.waterline.blobs;

import java.util.Locale;
import java.util.Set;

import jakarta.servlet.http.HttpServletResponse;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;

/**
 * How file contents that users uploaded are served: never as a page of our origin. A file is
 * served as a download ({@code Content-Disposition: attachment}), with {@code nosniff}, under a
 * {@code Content-Security-Policy} of {@code sandbox} and {@code default-src 'none'} (a browser that
 * renders it anyway gives it an opaque origin that can read nothing of ours and run no script), and
 * with its type only if that type is passive: anything that a browser could run or render as a
 * document (HTML, SVG, XML, script, and any type not in {@link #PASSIVE}) is served as
 * {@code application/octet-stream}. A probe uploaded a {@code text/html} blob whose script, opened
 * through {@code /api/blobs/{id}?access_token=…}, read the demo's token from {@code localStorage}.
 * The type recorded at upload is kept and answered in the file's description; only the served
 * header changes.
 */
public final class UserContent {

    private UserContent() {
    }

    /** Types served as recorded: images a browser only decodes, sound and video, plain text, archives, PDF. */
    static final Set<String> PASSIVE = Set.of(
            "image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp",
            "text/plain", "text/csv", "application/json", "application/pdf", "application/zip", "application/gzip",
            "application/octet-stream");

    /** The type a file recorded as {@code uploaded} is served as. */
    public static MediaType servedAs(String uploaded) {
        String[] pieces = uploaded.split(";");
        MediaType type;
        try {
            // parameters are read apart: one Spring cannot parse (an unknown charset) must not decide the type
            type = MediaType.parseMediaType(pieces[0].strip());
        }
        catch (RuntimeException unparseable) {
            return MediaType.APPLICATION_OCTET_STREAM;
        }
        String bare = (type.getType() + "/" + type.getSubtype()).toLowerCase(Locale.ROOT);
        if (PASSIVE.contains(bare)) {
            MediaType served = MediaType.parseMediaType(bare);
            if (bare.startsWith("text/")) {
                for (int i = 1; i < pieces.length; i++) {
                    String[] kv = pieces[i].split("=", 2);
                    if (kv.length == 2 && kv[0].strip().equalsIgnoreCase("charset")) {
                        String charset = kv[1].strip().replace("\"", "");
                        if (charset.matches("[A-Za-z0-9._-]{1,40}") && java.nio.charset.Charset.isSupported(charset)) {
                            served = new MediaType(served, java.nio.charset.Charset.forName(charset));
                        }
                    }
                }
            }
            return served;
        }
        if ((bare.startsWith("audio/") || bare.startsWith("video/")) && !bare.contains("xml")) {
            return MediaType.parseMediaType(bare);
        }
        return MediaType.APPLICATION_OCTET_STREAM;
    }

    /** The headers every answer carrying a user's file gets, whatever its type. */
    public static void protect(HttpServletResponse response, String fileName) {
        response.setHeader(HttpHeaders.CONTENT_DISPOSITION, "attachment; filename=\"" + safeName(fileName) + "\"");
        response.setHeader("X-Content-Type-Options", "nosniff");
        response.setHeader("Content-Security-Policy", "sandbox; default-src 'none'");
        response.setHeader("Cross-Origin-Resource-Policy", "same-origin");
    }

    /** A file name for the header: printable ASCII without quotes or backslashes, at most 100 characters. */
    static String safeName(String name) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < name.length() && b.length() < 100; i++) {
            char c = name.charAt(i);
            b.append(c >= 0x20 && c < 0x7f && c != '"' && c != '\\' ? c : '_');
        }
        return b.isEmpty() ? "file" : b.toString();
    }

    /** A byte range of a file of {@code size} bytes: {@code from} inclusive, {@code to} exclusive. */
    public record Range(long from, long to) {

        public long length() {
            return to - from;
        }
    }

    /** What a {@code Range} header asks of a file of {@code size} bytes. */
    public sealed interface Ranged {
        /** No range, or one we do not serve (several ranges, another unit): the whole file, 200. */
        record Whole() implements Ranged {
        }

        /** One satisfiable range: 206. */
        record Part(Range range) implements Ranged {
        }

        /** A range wholly past the end: 416. */
        record Unsatisfiable() implements Ranged {
        }
    }

    /**
     * Parses a {@code Range} header (RFC 9110 §14.2) for a file of {@code size} bytes: one
     * {@code bytes=a-b}, {@code bytes=a-} or {@code bytes=-n}; several ranges, other units and
     * malformed headers are ignored (the whole file is served, as the RFC allows).
     */
    public static Ranged range(String header, long size) {
        if (header == null || !header.regionMatches(true, 0, "bytes=", 0, 6) || header.indexOf(',') >= 0) {
            return new Ranged.Whole();
        }
        String spec = header.substring(6).strip();
        int dash = spec.indexOf('-');
        if (dash < 0) {
            return new Ranged.Whole();
        }
        try {
            String first = spec.substring(0, dash).strip();
            String last = spec.substring(dash + 1).strip();
            if (first.isEmpty()) {
                if (last.isEmpty()) {
                    return new Ranged.Whole();
                }
                if (!digits(last)) {
                    return new Ranged.Whole();
                }
                long suffix = Long.parseLong(last);
                if (suffix == 0 || size == 0) {
                    return new Ranged.Unsatisfiable();
                }
                return size == 0 ? new Ranged.Unsatisfiable() : new Ranged.Part(new Range(Math.max(0, size - suffix), size));
            }
            if (!digits(first) || !(last.isEmpty() || digits(last))) {
                return new Ranged.Whole();
            }
            if (size == 0) {
                return new Ranged.Unsatisfiable();
            }
            long from = Long.parseLong(first);
            if (from < 0 || (!last.isEmpty() && Long.parseLong(last) < from)) {
                return new Ranged.Whole();
            }
            if (from >= size) {
                return new Ranged.Unsatisfiable();
            }
            long to = last.isEmpty() ? size - 1 : Long.parseLong(last);
            return new Ranged.Part(new Range(from, Math.min(to, size - 1) + 1));
        }
        catch (NumberFormatException malformed) {
            return new Ranged.Whole();
        }
    }

    private static boolean digits(String s) {
        return !s.isEmpty() && s.length() <= 18 && s.chars().allMatch(c -> c >= '0' && c <= '9');
    }
}
