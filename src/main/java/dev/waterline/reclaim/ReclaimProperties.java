package dev.waterline.reclaim;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code waterline.reclaim.*}.
 *
 * @param enabled whether the GC loop runs. Default true.
 * @param interval pause between GC passes. Default 1 s.
 * @param grace rows younger than this are never reclaimed, whatever the line: it covers a row's
 *              way from commit to its first pin. Default 5 s.
 * @param chunk most rows one delete statement removes. Default 10,000.
 * @param maxChunksPerPass most delete statements per pass, so one pass stays short. Default 20.
 */
@ConfigurationProperties("waterline.reclaim")
public record ReclaimProperties(
        @DefaultValue("true") boolean enabled,
        @DefaultValue("1s") Duration interval,
        @DefaultValue("5s") Duration grace,
        @DefaultValue("10000") int chunk,
        @DefaultValue("20") int maxChunksPerPass) {
}
