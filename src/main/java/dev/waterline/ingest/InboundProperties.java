package dev.waterline.ingest;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code waterline.inbound.*}.
 *
 * @param queueSize sends waiting to be persisted, split evenly between the writers; past it a send
 *                  gets {@code overloaded}. Default 8000.
 * @param batchSize most sends one group-commit transaction carries. Default 256 (the paper used 36;
 *                  under light load the linger closes a batch long before it fills, and under load
 *                  larger batches cost the database less per message).
 * @param linger how long a batch waits for company after its first send. Default 5 ms.
 * @param writers concurrent group-commit transactions; chats are spread over them by id. Default 2.
 * @param idempotencyWindow how long a (sender, correlationId) maps to the message it created. Default 24 h.
 * @param retries attempts of one batch when a concurrent batch committed the same key first. Default 3.
 * @param drainTimeout how long, at shutdown, the writers may take to commit what is queued; what is
 *                     left after it is answered {@code unavailable}. Default 10 s.
 * @param commitTimeout longest one group-commit transaction's statements may take (the transaction's
 *                      timeout, applied to each statement as what is left of it); past it the batch
 *                      rolls back and is answered {@code unavailable}. It also bounds how long
 *                      shutdown waits for a batch in flight after {@code drain-timeout}. Default 10 s.
 */
@ConfigurationProperties("waterline.inbound")
public record InboundProperties(
        @DefaultValue("8000") int queueSize,
        @DefaultValue("256") int batchSize,
        @DefaultValue("5ms") Duration linger,
        @DefaultValue("2") int writers,
        @DefaultValue("24h") Duration idempotencyWindow,
        @DefaultValue("3") int retries,
        @DefaultValue("10s") Duration drainTimeout,
        @DefaultValue("10s") Duration commitTimeout) {
}
