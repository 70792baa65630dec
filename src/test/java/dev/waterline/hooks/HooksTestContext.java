package dev.waterline.hooks;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import dev.waterline.support.WaterlineIntegrationTest;
import org.springframework.test.context.TestPropertySource;

/**
 * The hook tests' context (one, shared by their classes), with a database and Redis database of
 * its own, twenty workers, and backoffs, cooldowns and timeouts short enough to watch.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@WaterlineIntegrationTest
@TestPropertySource(properties = {
        "waterline.embedded.database=hooks",
        "spring.data.redis.database=33",
        "waterline.hooks.allowed-hosts=localhost",
        "waterline.hooks.workers=20",
        "waterline.hooks.poll-interval=100ms",
        "waterline.hooks.backoff-base=200ms",
        "waterline.hooks.backoff-max=5s",
        "waterline.hooks.max-attempts=6",
        "waterline.hooks.breaker-failures=5",
        "waterline.hooks.breaker-cooldown=1s",
        "waterline.hooks.call-timeout=1500ms",
        "waterline.hooks.connect-timeout=1s",
        "waterline.hooks.claim-timeout=4s",
        "waterline.hooks.maintenance-interval=300ms"})
@interface HooksTestContext {
}
