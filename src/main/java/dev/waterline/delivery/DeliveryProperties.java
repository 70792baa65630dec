package dev.waterline.delivery;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code waterline.delivery.*}.
 *
 * @param fastPath whether committed rows are pushed at once; off leaves every delivery to the
 *                 poller (for tests and diagnosis). Default true.
 * @param fastQueueSize the fast path's hand-off buffer; a row that does not fit is shed to the poller. Default 8000.
 * @param concurrency concurrent socket writers, on the fast path and again on the poller. Default 32.
 * @param batchSize rows the poller claims per poll. Default 6000.
 * @param queueSize the poller's outbound buffer; it claims nothing while the buffer is non-empty. Default 8000.
 * @param lease how long a delivered row is left to be acked before the poller re-delivers it, and
 *              how long a new row is left to the fast path. Must be well above the p99.9 of
 *              delivery-to-ack latency. Default 10 s.
 * @param pollInterval pause between polls that found nothing to do. Default 100 ms.
 */
@ConfigurationProperties("waterline.delivery")
public record DeliveryProperties(
        @DefaultValue("true") boolean fastPath,
        @DefaultValue("8000") int fastQueueSize,
        @DefaultValue("32") int concurrency,
        @DefaultValue("6000") int batchSize,
        @DefaultValue("8000") int queueSize,
        @DefaultValue("10s") Duration lease,
        @DefaultValue("100ms") Duration pollInterval) {
}
