package dev.waterline.hooks;

import java.time.Duration;
import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code waterline.hooks.*} (PROTOCOL.md §7).
 *
 * @param enabled whether this node's workers deliver (hooks are still created and enqueued when
 *                off: another node delivers). Default true.
 * @param workers claim loops of this node; each claims the deliveries of its slice
 *                ({@code id % workers}). Default 4.
 * @param batchSize most deliveries one claim takes. Default 32.
 * @param pollInterval how long a worker whose slice had nothing due waits before it looks again (a
 *                     commit on this node wakes it sooner). Default 250 ms.
 * @param maxInFlight deliveries this node holds claimed (calls out) at once, all hooks together.
 *                    Default 256.
 * @param perHookConcurrency most calls this node makes to one hook at once; a hook reaches it by
 *                           calls that end within {@code slow-call} (from 1, then 2, one more
 *                           with each), and only while its pool's equal part allows as many (see
 *                           {@code slow-share}). Default 8.
 * @param slowCall a call that takes longer than this, or is still out past it, judges its hook
 *                 slow: back to the slow share, where it may hold that share's equal part.
 *                 Default 1 s.
 * @param slowShare the part of {@code max-in-flight} that hooks judged slow or not judged yet share
 *                  (each with calls out an equal part of it, counting one hook more, at least one
 *                  call); the rest is the fast hooks', split the same way. Above 0, at most 1 (1
 *                  leaves fast hooks one call each). Default 0.5.
 * @param userShare the part of {@code max-in-flight} that the hooks one user created may hold at
 *                  once, fast and slow together, so that one user's hooks never take the whole
 *                  node. Above 0, at most 1. Default 0.5.
 * @param callTimeout longest one call may take (connect, send, the target's answer or the broker's
 *                    confirmation); past it the attempt is a retryable failure. Default 10 s.
 * @param connectTimeout longest a connection to a target may take to open. Default 5 s.
 * @param claimTimeout a delivery claimed this long ago and not recorded (its node died, its worker
 *                     was killed) goes back to pending. Must exceed {@code call-timeout}. Default 60 s.
 * @param backoffBase the first retry's delay; each later one doubles it, with jitter. Default 1 s.
 * @param backoffMax the longest delay between two attempts (a {@code Retry-After} is capped by it too). Default 10 min.
 * @param maxAttempts attempts before a retryable failure sends the delivery to the dead letters. Default 12.
 * @param breakerFailures consecutive retryable failures that open a hook's breaker. Default 5.
 * @param breakerCooldown how long an open breaker holds its hook's deliveries before one probe. Default 30 s.
 * @param maintenanceInterval how often expired claims and stale probes are returned, the breaker's
 *                            held rows checked and the backlog gauges read. Default 5 s.
 * @param allowedHosts host names or addresses a target may use although they are loopback,
 *                     private, link-local or multicast (the SSRF guard's exceptions). Default none.
 * @param maxHooksPerChat hooks one chat may have. Default 10.
 * @param yieldAbove the group commit's queue pressure (its fullest writer's share, 0 to 1) above
 *                   which the workers claim nothing new: hook deliveries may wait, sends may not.
 *                   Default 0.2; 1 never yields.
 * @param kafkaMaxProducers Kafka producers (one per cluster, each with a network thread of its
 *                          own) this node keeps at once, those closing included; a call that would
 *                          need one more while every one is in use is not made (tried again within
 *                          {@code call-timeout}, no attempt counted). Default 16.
 * @param deadRetention a dead letter older than this (since it died) is deleted by the maintenance
 *                      pass, and is then gone from the dead-letter list and beyond replay.
 *                      Default 14 days.
 * @param kafkaProducerIdle a Kafka producer unused this long is closed (one whose hooks are all
 *                          deleted on this node, at once). Default 1 min.
 */
@ConfigurationProperties("waterline.hooks")
public record HookProperties(
        @DefaultValue("true") boolean enabled,
        @DefaultValue("4") int workers,
        @DefaultValue("32") int batchSize,
        @DefaultValue("250ms") Duration pollInterval,
        @DefaultValue("256") int maxInFlight,
        @DefaultValue("8") int perHookConcurrency,
        @DefaultValue("10s") Duration callTimeout,
        @DefaultValue("5s") Duration connectTimeout,
        @DefaultValue("60s") Duration claimTimeout,
        @DefaultValue("1s") Duration backoffBase,
        @DefaultValue("10m") Duration backoffMax,
        @DefaultValue("12") int maxAttempts,
        @DefaultValue("5") int breakerFailures,
        @DefaultValue("30s") Duration breakerCooldown,
        @DefaultValue("5s") Duration maintenanceInterval,
        List<String> allowedHosts,
        @DefaultValue("10") int maxHooksPerChat,
        @DefaultValue("0.2") double yieldAbove,
        @DefaultValue("1s") Duration slowCall,
        @DefaultValue("0.5") double slowShare,
        @DefaultValue("16") int kafkaMaxProducers,
        @DefaultValue("1m") Duration kafkaProducerIdle,
        @DefaultValue("0.5") double userShare,
        @DefaultValue("14d") Duration deadRetention) {

    public HookProperties {
        allowedHosts = allowedHosts == null ? List.of()
                : allowedHosts.stream().map(String::strip).filter(s -> !s.isEmpty()).toList();
        if (workers < 1 || batchSize < 1 || maxInFlight < 1 || perHookConcurrency < 1
                || maxAttempts < 1 || breakerFailures < 1 || maxHooksPerChat < 1 || kafkaMaxProducers < 1) {
            throw new IllegalArgumentException("waterline.hooks: workers, batch-size, max-in-flight, per-hook-concurrency,"
                    + " max-attempts, breaker-failures, max-hooks-per-chat and kafka-max-producers must be positive");
        }
        if (!(slowShare > 0 && slowShare <= 1)) {
            throw new IllegalArgumentException("waterline.hooks.slow-share must be above 0 and at most 1: " + slowShare);
        }
        if (!(userShare > 0 && userShare <= 1)) {
            throw new IllegalArgumentException("waterline.hooks.user-share must be above 0 and at most 1: " + userShare);
        }
        if (slowCall.isNegative() || slowCall.isZero() || kafkaProducerIdle.isNegative() || kafkaProducerIdle.isZero()) {
            throw new IllegalArgumentException("waterline.hooks.slow-call and kafka-producer-idle must be positive");
        }
        if (!(yieldAbove >= 0 && yieldAbove <= 1)) {
            throw new IllegalArgumentException("waterline.hooks.yield-above must be from 0 to 1: " + yieldAbove);
        }
        if (deadRetention.isNegative() || deadRetention.isZero()) {
            throw new IllegalArgumentException("waterline.hooks.dead-retention must be positive");
        }
        if (claimTimeout.compareTo(callTimeout.plusSeconds(1)) <= 0) {
            throw new IllegalArgumentException("waterline.hooks.claim-timeout must exceed call-timeout by more than a second");
        }
    }
}
