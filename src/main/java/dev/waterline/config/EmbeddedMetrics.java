package dev.waterline.config;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.stereotype.Component;

/**
 * What the embedded mode's start found that it could not read, as a series: the embedded servers
 * start before any meter registry exists, so they count in a static of their own and this reports
 * it, registered at start (zero when nothing was found).
 */
@Component
class EmbeddedMetrics {

    EmbeddedMetrics(MeterRegistry registry) {
        FunctionCounter.builder("waterline.embedded.claims.unreadable", EmbeddedOrphans.UNREADABLE_CLAIMS, Number::doubleValue)
                .description("claims of an embedded data folder whose time could not be read (taken for none: no orphan looked for)")
                .register(registry);
    }
}
