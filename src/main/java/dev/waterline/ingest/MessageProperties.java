package dev.waterline.ingest;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code waterline.messages.*} (PROTOCOL.md §9).
 *
 * @param maxReactionsPerUser distinct emoji one user may have on one message at once; one more is
 *                            {@code invalid}. Default 20.
 * @param maxDistinctReactions distinct emoji one message may carry, all users together; a new one
 *                             past it is {@code invalid}. It bounds what a history page says of a
 *                             message's reactions, whatever the chat's size. Default 50.
 */
@ConfigurationProperties("waterline.messages")
public record MessageProperties(@DefaultValue("20") int maxReactionsPerUser, @DefaultValue("50") int maxDistinctReactions) {

    public MessageProperties {
        if (maxReactionsPerUser < 1 || maxDistinctReactions < 1) {
            throw new IllegalArgumentException("waterline.messages.max-reactions-per-user and max-distinct-reactions must be at least 1");
        }
    }
}
