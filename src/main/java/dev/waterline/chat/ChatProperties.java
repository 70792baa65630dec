package dev.waterline.chat;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code waterline.chats.*}.
 *
 * @param maxMembers most members a chat may have, the creator included; more is {@code 400}. Default 500.
 * @param maxChatsPerUser most chats a user may belong to; creating or joining one more is
 *                        {@code 429 rate_limited}. Default 10,000.
 */
@ConfigurationProperties("waterline.chats")
public record ChatProperties(
        @DefaultValue("500") int maxMembers,
        @DefaultValue("10000") int maxChatsPerUser) {

    public ChatProperties {
        if (maxMembers < 2 || maxChatsPerUser < 1) {
            throw new IllegalArgumentException("waterline.chats.max-members must be at least 2 and max-chats-per-user at least 1");
        }
    }
}
