package dev.waterline.watermark;

import io.lettuce.core.ClientOptions;
import org.springframework.boot.data.redis.autoconfigure.LettuceClientOptionsBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Redis is an index the message path can live without for a while, so a call made while the
 * connection is down must fail at once rather than wait in Lettuce's queue for the command
 * timeout: the fast path then writes unrecorded, the gateway logs, GC deletes nothing, and
 * everything resumes when Lettuce has reconnected on its own.
 */
@Configuration(proxyBeanMethods = false)
class RedisClientConfig {

    @Bean
    LettuceClientOptionsBuilderCustomizer failFastWhileDisconnected() {
        return builder -> builder.autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS);
    }
}
