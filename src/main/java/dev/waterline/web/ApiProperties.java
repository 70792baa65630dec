package dev.waterline.web;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * {@code waterline.api.*}: what one client may ask of the REST API.
 *
 * @param requestsPerSecond sustained REST requests per user per second (per address for the
 *                          unauthenticated dev-token endpoint); more get {@code 429 rate_limited}
 *                          with {@code Retry-After}. Default 50.
 * @param burst requests a user may make at once before the rate applies. Default 100.
 * @param maxConcurrentQueries REST requests at PostgreSQL at once (history pages, chat reads and
 *                             writes); the rest wait their turn. Default 8, half the connection
 *                             pool, so that no burst of REST calls (a reconnect storm's resyncs,
 *                             a flood of chat creations) holds every pooled connection while the
 *                             group commit waits for one (it gives up after 2 s and answers
 *                             {@code unavailable}).
 * @param maxWait how long a request waits for its turn before it is answered 503
 *                {@code unavailable} (the client retries). Default 30 s.
 * @param maxPageBytes about how many bytes of message bodies or member ids one page (history,
 *                     chat list) carries: a page stops early (with {@code hasMore} or
 *                     {@code next}) rather than grow past it, whatever {@code limit} asked,
 *                     so that concurrent pages cannot exhaust the heap. Default 1 MiB.
 * @param maxBodyBytes largest REST request body read; larger is {@code 413 too_large}. Default
 *                     1 MiB (a chat of 500 members of 128-character ids is ~70 KB).
 * @param bodyMinRate the slowest a REST body (not a file upload, which has a pace of its own,
 *                    {@code waterline.blobs.*}) may arrive, over each {@code body-rate-window}:
 *                    slower is {@code 408} and the connection closes, so that a body trickled a
 *                    byte at a time cannot hold a connection (and its request's thread) as a
 *                    trickled request head no longer can. Default 16 KB a second.
 * @param bodyRateWindow the window over which a body's pace is judged. Default 10 s.
 */
@ConfigurationProperties("waterline.api")
public record ApiProperties(
        @DefaultValue("50") int requestsPerSecond,
        @DefaultValue("100") int burst,
        @DefaultValue("8") int maxConcurrentQueries,
        @DefaultValue("30s") Duration maxWait,
        @DefaultValue("1MB") DataSize maxPageBytes,
        @DefaultValue("1MB") DataSize maxBodyBytes,
        @DefaultValue("16KB") DataSize bodyMinRate,
        @DefaultValue("10s") Duration bodyRateWindow) {

    public ApiProperties {
        if (requestsPerSecond < 1 || burst < 1 || maxConcurrentQueries < 1) {
            throw new IllegalArgumentException(
                    "waterline.api.requests-per-second, burst and max-concurrent-queries must be at least 1");
        }
    }
}
