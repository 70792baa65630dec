package dev.waterline.reaper;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code waterline.reapers.*}.
 *
 * @param idleTimeout a connection that sends nothing for this long is closed with 4000. Default 30 s.
 * @param maxPending more unacked deliveries than this withdraws a client (4008). Default 20.
 * @param maxDeliveryAttempts a delivery re-sent more often than this withdraws its recipient (4008). Default 3.
 * @param reconnectGrace how long a fresh connection is spared the reapers. Default 0: under
 *                       load a grace only delays the withdrawal while re-deliveries pile up.
 * @param interval how often the idle and overload reapers look. Default 1 s.
 */
@ConfigurationProperties("waterline.reapers")
public record ReaperProperties(
        @DefaultValue("30s") Duration idleTimeout,
        @DefaultValue("20") int maxPending,
        @DefaultValue("3") int maxDeliveryAttempts,
        @DefaultValue("0s") Duration reconnectGrace,
        @DefaultValue("1s") Duration interval) {
}
