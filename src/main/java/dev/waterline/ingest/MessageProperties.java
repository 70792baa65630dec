package dev.waterline.ingest;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code waterline.messages.*} (PROTOCOL.md §9).
 *
 * @param maxReactionsPerUser distinct emoji one user may have on one message at once; one more is
 *                            {@code invalid}. Default 20.
 */
@ConfigurationProperties("waterline.messages")
public record MessageProperties(@DefaultValue("20") int maxReactionsPerUser) {

    public MessageProperties {
        if (maxReactionsPerUser < 1) {
            throw new IllegalArgumentException("waterline.messages.max-reactions-per-user must be at least 1");
        }
    }
}
