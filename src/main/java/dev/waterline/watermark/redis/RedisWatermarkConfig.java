package dev.waterline.watermark.redis;

import dev.waterline.watermark.WatermarkIndex;
import io.lettuce.core.ClientOptions;
import org.springframework.boot.data.redis.autoconfigure.LettuceClientOptionsBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The watermark index's Redis wiring: the {@link WatermarkIndex} port on its Redis adapter, and
 * the client's behaviour while Redis is down. Redis is an index the message path can live without
 * for a while, so a call made while the connection is down must fail at once rather than wait in
 * Lettuce's queue for the command timeout: the fast path then writes unrecorded, the gateway logs,
 * GC deletes nothing, and everything resumes when Lettuce has reconnected on its own.
 */
@Configuration(proxyBeanMethods = false)
class RedisWatermarkConfig {

    @Bean
    WatermarkIndex watermarkIndex(StringRedisTemplate redis) {
        return new RedisWatermarkIndex(redis);
    }

    @Bean
    LettuceClientOptionsBuilderCustomizer failFastWhileDisconnected() {
        return builder -> builder.autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS);
    }
}
