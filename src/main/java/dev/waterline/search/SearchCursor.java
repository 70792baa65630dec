package dev.waterline.search;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Base64;
import java.util.Optional;

/**
 * Where a page of results stopped: the last result's place in the order results come in
 * ({@code sent_at} descending, then {@code chat_id}, then {@code seq}, both descending, so that
 * messages of one batch, which share their time, still have one order). The next page starts strictly
 * below it, so pages neither skip nor repeat a result that stays matching; the wire form is opaque
 * (base64url of {@code micros:seq:chatId}).
 */
record SearchCursor(Instant sentAt, String chatId, long seq) {

    private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder DECODER = Base64.getUrlDecoder();

    SearchCursor {
        sentAt = sentAt.truncatedTo(ChronoUnit.MICROS);
    }

    String encode() {
        long micros = ChronoUnit.MICROS.between(Instant.EPOCH, sentAt);
        return ENCODER.encodeToString((micros + ":" + seq + ":" + chatId).getBytes(StandardCharsets.UTF_8));
    }

    /** The cursor {@code text} encodes, or empty when it is not one this server gave. */
    static Optional<SearchCursor> decode(String text) {
        if (text.isEmpty() || text.length() > 400) {
            return Optional.empty();
        }
        try {
            String[] parts = new String(DECODER.decode(text), StandardCharsets.UTF_8).split(":", 3);
            if (parts.length != 3 || parts[2].isEmpty()) {
                return Optional.empty();
            }
            long micros = Long.parseLong(parts[0]);
            long seq = Long.parseLong(parts[1]);
            if (seq < 1) {
                return Optional.empty();
            }
            return Optional.of(new SearchCursor(Instant.EPOCH.plus(micros, ChronoUnit.MICROS), parts[2], seq));
        }
        catch (IllegalArgumentException | ArithmeticException | java.time.DateTimeException e) {
            // NumberFormatException is an IllegalArgumentException, as is bad base64
            return Optional.empty();
        }
    }
}
