package dev.waterline.auth;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code waterline.auth.*}.
 *
 * @param jwtSecret HS256 secret, at least 32 bytes (UTF-8). Required unless the embedded mode
 *                  generates one.
 * @param devTokens whether {@code POST /api/dev/tokens} issues tokens. Default {@code false};
 *                  the embedded, zero-configuration mode turns it on.
 * @param devTokenTtl lifetime of a dev token. Default 7 days.
 */
@ConfigurationProperties("waterline.auth")
public record AuthProperties(
        String jwtSecret,
        @DefaultValue("false") boolean devTokens,
        @DefaultValue("7d") Duration devTokenTtl) {
}
