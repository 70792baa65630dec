package dev.waterline.chat;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code waterline.chats.*}.
 *
 * @param maxMembers most members a chat may have, the creator included. Default 500.
 */
@ConfigurationProperties("waterline.chats")
public record ChatProperties(@DefaultValue("500") int maxMembers) {
}
