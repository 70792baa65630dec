package dev.waterline.auth;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code waterline.auth.*}.
 *
 * @param jwtSecret HS256 secret, at least 32 bytes (UTF-8). Required unless the embedded mode
 *                  generates one. {@link #PUBLISHED_DEVELOPMENT_SECRET} is refused unless dev
 *                  tokens are on.
 * @param devTokens whether {@code POST /api/dev/tokens} issues tokens. Default {@code false};
 *                  the embedded, zero-configuration mode turns it on.
 * @param devTokenTtl lifetime of a dev token. Default 7 days.
 * @param allowNoExp whether a token without {@code exp} is accepted (it never expires). Default
 *                   {@code false}: a leaked token must stop working by itself.
 * @param issuer when set, a token's {@code iss} must equal it. Default unset (not checked).
 * @param audience when set, a token's {@code aud} must contain it. Default unset (not checked).
 * @param clockSkew how far past {@code exp} (or before {@code nbf}) a token is still accepted, for
 *                  clocks that disagree a little; a WebSocket session is closed with 4001 at the
 *                  same instant its token stops being accepted. Default 60 s.
 */
@ConfigurationProperties("waterline.auth")
public record AuthProperties(
        String jwtSecret,
        @DefaultValue("false") boolean devTokens,
        @DefaultValue("7d") Duration devTokenTtl,
        @DefaultValue("false") boolean allowNoExp,
        String issuer,
        String audience,
        @DefaultValue("60s") Duration clockSkew) {

    /**
     * The secret {@code docker-compose.yml} and {@code TestWaterlineApplication} use when
     * {@code WATERLINE_AUTH_JWT_SECRET} is not set, so that the stack comes up with no setup. It is
     * published in this repository: anyone can sign a token for any user with it. It is accepted
     * only together with dev tokens (which hand out any token anyway), and said loudly in the log;
     * a deployment that turns dev tokens off but keeps this secret does not start.
     */
    public static final String PUBLISHED_DEVELOPMENT_SECRET = "waterline-development-secret-published-in-the-repository";

    public AuthProperties {
        if (PUBLISHED_DEVELOPMENT_SECRET.equals(jwtSecret) && !devTokens) {
            throw new IllegalArgumentException("waterline.auth.jwt-secret is the development secret published in Waterline's "
                    + "repository (docker-compose.yml): anyone can sign tokens with it. Set WATERLINE_AUTH_JWT_SECRET to 32 "
                    + "or more random bytes, or turn dev tokens on for a local run");
        }
    }
}
