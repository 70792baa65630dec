package dev.waterline.watermark.redis;

import dev.waterline.watermark.WatermarkIndex;
import org.springframework.data.redis.core.StringRedisTemplate;

/** For tests of other capabilities: the Redis adapter of the index on a Redis of their choosing (one that is down, say). */
public final class RedisWatermarkIndexes {

    private RedisWatermarkIndexes() {
    }

    public static WatermarkIndex on(StringRedisTemplate redis) {
        return new RedisWatermarkIndex(redis);
    }
}
