package dev.waterline.chat;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code waterline.chats.*}.
 *
 * @param maxMembers most members a chat may have, the creator included; more is {@code 400}. Default 500.
 * @param maxChatsPerUser most chats a user may belong to; creating or joining one more is
 *                        {@code 429 rate_limited}. Default 10,000.
 * @param maxChatsAddedByOthers of those, most that other users may have added this user to (a chat
 *                              another user created with them, or added them to): past it, others
 *                              are refused ({@code 429}), and the rest of the quota stays the
 *                              user's own, so nobody can spend it for them. Default half of
 *                              {@code max-chats-per-user} (5,000).
 */
@ConfigurationProperties("waterline.chats")
public record ChatProperties(
        @DefaultValue("500") int maxMembers,
        @DefaultValue("10000") int maxChatsPerUser,
        Integer maxChatsAddedByOthers) {

    public ChatProperties {
        if (maxMembers < 2 || maxChatsPerUser < 1) {
            throw new IllegalArgumentException("waterline.chats.max-members must be at least 2 and max-chats-per-user at least 1");
        }
        if (maxChatsAddedByOthers == null) {
            maxChatsAddedByOthers = Math.max(1, maxChatsPerUser / 2);
        }
        if (maxChatsAddedByOthers < 1 || maxChatsAddedByOthers > maxChatsPerUser) {
            throw new IllegalArgumentException("waterline.chats.max-chats-added-by-others must be from 1 to max-chats-per-user");
        }
    }

    /** The membership quotas, as the repository checks them. */
    public ChatRepository.Quota quota() {
        return new ChatRepository.Quota(maxChatsPerUser, maxChatsAddedByOthers);
    }
}
