package dev.waterline.typing;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code waterline.typing.*}.
 *
 * @param interval at most one push per user per chat per interval; a {@code typing} frame inside
 *                 it is dropped (a burst is coalesced into its first). Default 1 s (PROTOCOL.md §10).
 * @param queueSize typing frames waiting for their members' lookup; past it one is shed. Default 2000.
 * @param batchSize most typing frames per members' lookup. Default 256.
 * @param linger how long a batch waits for company. Default 20 ms.
 * @param shedAtPressure typing is shed while the fullest writer's share of the inbound queue is
 *                       at least this full (0 to 1): sends come first. Default 0.5.
 * @param shedAtBacklogChars a recipient whose connection holds at least this many characters not
 *                           yet written gets no typing push (its socket is behind already). Default 65536.
 */
@ConfigurationProperties("waterline.typing")
public record TypingProperties(
        @DefaultValue("1s") Duration interval,
        @DefaultValue("2000") int queueSize,
        @DefaultValue("256") int batchSize,
        @DefaultValue("20ms") Duration linger,
        @DefaultValue("0.5") double shedAtPressure,
        @DefaultValue("65536") long shedAtBacklogChars) {
}
