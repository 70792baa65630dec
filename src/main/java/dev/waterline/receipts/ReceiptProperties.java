package dev.waterline.receipts;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code waterline.receipts.*}.
 *
 * @param queueSize receipts waiting to be written; past it a receipt is dropped with an
 *                  {@code overloaded} error (a receipt is low-value and the next one supersedes it). Default 8000.
 * @param batchSize most receipts per transaction. Default 64.
 * @param linger how long a batch waits for company. Default 10 ms.
 */
@ConfigurationProperties("waterline.receipts")
public record ReceiptProperties(
        @DefaultValue("8000") int queueSize,
        @DefaultValue("64") int batchSize,
        @DefaultValue("10ms") Duration linger) {
}
