package dev.waterline.auth;

import java.nio.charset.StandardCharsets;
import java.text.ParseException;
import java.time.Clock;
import java.util.Date;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.jwk.source.ImmutableSecret;
import com.nimbusds.jose.proc.BadJOSEException;
import com.nimbusds.jose.proc.JWSVerificationKeySelector;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import com.nimbusds.jwt.proc.DefaultJWTClaimsVerifier;
import com.nimbusds.jwt.proc.DefaultJWTProcessor;
import org.springframework.stereotype.Component;

/**
 * Verifies and issues the HS256 JWTs that identify users (the {@code sub} claim).
 *
 * <p>Only HS256 is accepted: the key selector admits no other algorithm, and nimbus refuses
 * unsecured ({@code alg: none}) tokens outright. {@code exp} is honoured when present (no clock
 * skew allowance beyond nimbus' default of 60 s); a token without {@code sub}, or with one longer
 * than {@link #MAX_SUBJECT}, is refused.
 *
 * <p>A token that verified is remembered (by its exact text, for at most {@link #REMEMBERED_FOR})
 * with its subject and expiry: a client presents the same token on its WebSocket upgrade and on
 * every history page, and a reconnect storm would otherwise parse and verify the HMAC of each
 * again (~4 % of the server's CPU in a 5,000-client storm). A remembered token is still refused
 * once its {@code exp} (plus the same 60 s skew) has passed; refusals are never remembered, so a
 * forged token costs a full verification every time. Only tokens in canonical compact form are
 * remembered ({@link #CANONICAL}: three base64url parts, an HS256 signature's 43 characters, at
 * most {@link #MAX_REMEMBERED_LENGTH} characters): nimbus' base64url decoder skips characters
 * outside the alphabet, so one valid token padded with junk still verifies, and remembering each
 * padded copy would let one token holder fill the heap. The cache is bounded by characters held
 * ({@link #REMEMBERED_CHARS}), not by entries.
 */
@Component
public class Tokens {

    /** Longest user id, the same bound every endpoint applies to ids in request bodies. */
    public static final int MAX_SUBJECT = 128;

    static final long REMEMBERED_CHARS = 8_000_000;
    static final int MAX_REMEMBERED_LENGTH = 1024;
    static final java.time.Duration REMEMBERED_FOR = java.time.Duration.ofMinutes(10);
    static final Pattern CANONICAL = Pattern.compile("[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]{43}");

    /** A verified token's subject and the last instant (epoch ms, skew included) it is good for. */
    private record Verified(String subject, long goodUntilMillis) {
    }

    private final DefaultJWTProcessor<SecurityContext> processor = new DefaultJWTProcessor<>();
    private final long skewMillis;
    private final Cache<String, Verified> verified = Caffeine.newBuilder()
            .maximumWeight(REMEMBERED_CHARS)
            .weigher((String text, Verified v) -> text.length() + v.subject().length())
            .expireAfterWrite(REMEMBERED_FOR)
            .build();
    private final MACSigner signer;
    private final Clock clock;

    public Tokens(AuthProperties properties, Clock clock) {
        String secret = properties.jwtSecret();
        if (secret == null || secret.getBytes(StandardCharsets.UTF_8).length < 32) {
            throw new IllegalStateException(
                    "waterline.auth.jwt-secret (env WATERLINE_AUTH_JWT_SECRET) must be set to at least 32 bytes");
        }
        byte[] key = secret.getBytes(StandardCharsets.UTF_8);
        processor.setJWSKeySelector(new JWSVerificationKeySelector<>(JWSAlgorithm.HS256, new ImmutableSecret<>(key)));
        DefaultJWTClaimsVerifier<SecurityContext> claims = new DefaultJWTClaimsVerifier<>(null, Set.of("sub"));
        processor.setJWTClaimsSetVerifier(claims);
        this.skewMillis = claims.getMaxClockSkew() * 1000L;
        try {
            this.signer = new MACSigner(key);
        }
        catch (JOSEException e) {
            throw new IllegalStateException("Unusable JWT secret", e);
        }
        this.clock = clock;
    }

    /** The user a token names, or empty when the token is malformed, forged, of another algorithm or expired. */
    public Optional<String> verify(String token) {
        if (token == null || token.isBlank()) {
            return Optional.empty();
        }
        String text = token.strip();
        Verified known = verified.getIfPresent(text);
        if (known != null) {
            if (clock.millis() < known.goodUntilMillis()) {
                return Optional.of(known.subject());
            }
            verified.invalidate(text);
            return Optional.empty();
        }
        try {
            JWTClaimsSet claims = processor.process(text, null);
            String sub = claims.getSubject();
            if (sub == null || sub.isBlank() || sub.length() > MAX_SUBJECT) {
                return Optional.empty();
            }
            Date exp = claims.getExpirationTime();
            if (text.length() <= MAX_REMEMBERED_LENGTH && CANONICAL.matcher(text).matches()) {
                verified.put(text, new Verified(sub, exp == null ? Long.MAX_VALUE : exp.getTime() + skewMillis));
            }
            return Optional.of(sub);
        }
        catch (ParseException | BadJOSEException | JOSEException e) {
            return Optional.empty();
        }
    }

    /** How many verified tokens are remembered now (for tests). */
    long remembered() {
        verified.cleanUp();
        return verified.estimatedSize();
    }

    public String issue(String userId, java.time.Duration ttl) {
        var now = clock.instant();
        JWTClaimsSet claims = new JWTClaimsSet.Builder()
                .subject(userId)
                .issueTime(Date.from(now))
                .expirationTime(Date.from(now.plus(ttl)))
                .build();
        SignedJWT jwt = new SignedJWT(new JWSHeader(JWSAlgorithm.HS256), claims);
        try {
            jwt.sign(signer);
        }
        catch (JOSEException e) {
            throw new IllegalStateException("Could not sign a token", e);
        }
        return jwt.serialize();
    }
}
