package dev.waterline.hooks.sinks;

import java.net.http.HttpHeaders;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;

import dev.waterline.hooks.Sink;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** How an HTTP answer is classed (PROTOCOL.md §7), Retry-After read, and the signature computed. */
class HttpSinkUnitTests {

    static final Clock CLOCK = Clock.fixed(Instant.parse("2026-12-01T12:00:00Z"), ZoneOffset.UTC);

    static HttpHeaders headers(Map<String, String> h) {
        return HttpHeaders.of(h.entrySet().stream().collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, e -> List.of(e.getValue()))),
                (a, b) -> true);
    }

    @Test
    void twoHundredsAreDoneTimeoutsThrottlingAndServerErrorsRetriedAndOtherStatusesPermanent() {
        for (int s : new int[] {200, 201, 202, 204, 299}) {
            assertThat(HttpSink.classify(s, headers(Map.of()), CLOCK)).as("" + s).isInstanceOf(Sink.Outcome.Done.class);
        }
        for (int s : new int[] {408, 429, 500, 502, 503, 504, 599}) {
            assertThat(HttpSink.classify(s, headers(Map.of()), CLOCK)).as("" + s).isInstanceOf(Sink.Outcome.Retry.class);
        }
        for (int s : new int[] {301, 302, 307, 400, 401, 403, 404, 409, 410, 413, 422}) {
            assertThat(HttpSink.classify(s, headers(Map.of()), CLOCK)).as("" + s).isInstanceOf(Sink.Outcome.Permanent.class);
        }
    }

    @Test
    void retryAfterIsReadAsSecondsOrAsAnHttpDate() {
        Sink.Outcome.Retry seconds = (Sink.Outcome.Retry) HttpSink.classify(429, headers(Map.of("Retry-After", "2")), CLOCK);
        assertThat(seconds.retryAfter()).isEqualTo(Duration.ofSeconds(2));
        Sink.Outcome.Retry date = (Sink.Outcome.Retry) HttpSink.classify(503,
                headers(Map.of("Retry-After", "Tue, 01 Dec 2026 12:01:30 GMT")), CLOCK);
        assertThat(date.retryAfter()).isEqualTo(Duration.ofSeconds(90));
        assertThat(HttpSink.retryAfter("Tue, 01 Dec 2026 11:00:00 GMT", CLOCK)).isEqualTo(Duration.ZERO);
        assertThat(HttpSink.retryAfter("soon", CLOCK)).isNull();
        Sink.Outcome.Retry none = (Sink.Outcome.Retry) HttpSink.classify(500, headers(Map.of()), CLOCK);
        assertThat(none.retryAfter()).isNull();
    }

    @Test
    void theSignatureIsTheHexHmacSha256OfTheTimestampADotAndTheBody() {
        // computed apart: printf '1700000000.{"a":1}' | openssl dgst -sha256 -hmac secret
        assertThat(HttpSink.signature("secret", 1_700_000_000L, "{\"a\":1}"))
                .isEqualTo("t=1700000000,v1=49f24e537407743fa4a0242bb63b94b9a47ee99cbbe071ccd8a22550ae411686");
    }
}
