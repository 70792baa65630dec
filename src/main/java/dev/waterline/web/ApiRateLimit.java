package dev.waterline.web;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.waterline.auth.ApiAuthentication;
import dev.waterline.metrics.WaterlineMetrics;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.ConsumptionProbe;
import io.micrometer.core.instrument.Counter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.servlet.HandlerInterceptor;

/**
 * The REST rate limit (PROTOCOL.md §2): a Bucket4j token bucket per user ({@code burst} tokens,
 * refilled at {@code requests-per-second}), or per remote address for requests that carry no
 * user (the dev-token endpoint). Over it: {@code 429 {"error":"rate_limited"}} with
 * {@code Retry-After} in whole seconds. Buckets live in a bounded cache (an idle user's bucket
 * is full again after {@code burst / requests-per-second} seconds anyway, so forgetting it after
 * a minute idle changes nothing).
 */
@Component
class ApiRateLimit implements HandlerInterceptor {

    private static final int MAX_BUCKETS = 200_000;

    private final ApiProperties properties;
    private final Cache<String, Bucket> buckets = Caffeine.newBuilder()
            .maximumSize(MAX_BUCKETS)
            .expireAfterAccess(Duration.ofMinutes(1))
            .build();
    private final Counter limited;

    ApiRateLimit(ApiProperties properties, WaterlineMetrics metrics) {
        this.properties = properties;
        this.limited = metrics.counter("waterline.api.rate.limited", "REST requests answered 429 (over the per-user rate)");
    }

    @Override
    public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler) throws Exception {
        String user = ApiAuthentication.userIdOrNull(request);
        String key = user != null ? "u:" + user : "a:" + request.getRemoteAddr();
        Bucket bucket = buckets.get(key, k -> Bucket.builder()
                .addLimit(limit -> limit.capacity(properties.burst())
                        .refillGreedy(properties.requestsPerSecond(), Duration.ofSeconds(1)))
                .build());
        ConsumptionProbe probe = bucket.tryConsumeAndReturnRemaining(1);
        if (probe.isConsumed()) {
            return true;
        }
        limited.increment();
        long seconds = Math.max(1, TimeUnit.NANOSECONDS.toSeconds(probe.getNanosToWaitForRefill() + 999_999_999L));
        response.setStatus(429);
        response.setHeader(HttpHeaders.RETRY_AFTER, Long.toString(seconds));
        response.setContentType(MediaType.APPLICATION_JSON_VALUE);
        response.getWriter().write("{\"error\":\"rate_limited\",\"message\":\"over " + properties.requestsPerSecond()
                + " requests per second; retry after " + seconds + " s\"}");
        return false;
    }
}
