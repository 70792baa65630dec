package dev.waterline.history;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code waterline.retention.*}. History must outlive the outbox by far (invariant I4): a client
 * that was withdrawn or offline recovers only from history.
 *
 * @param history how long history is kept. Default 90 days.
 * @param outbox age past which an outbox row is reclaimed whatever the watermark says. Default 26 hours.
 * @param purgeInterval how often the retention loops run. Default 1 minute.
 */
@ConfigurationProperties("waterline.retention")
public record RetentionProperties(
        @DefaultValue("90d") Duration history,
        @DefaultValue("26h") Duration outbox,
        @DefaultValue("1m") Duration purgeInterval) {

    public RetentionProperties {
        if (history.compareTo(outbox.multipliedBy(2)) < 0) {
            throw new IllegalArgumentException("waterline.retention.history (" + history
                    + ") must be far longer than waterline.retention.outbox (" + outbox + "): invariant I4");
        }
    }
}
