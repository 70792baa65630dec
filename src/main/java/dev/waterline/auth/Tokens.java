package dev.waterline.auth;

import java.nio.charset.StandardCharsets;
import java.text.ParseException;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.Date;
import java.util.HashSet;
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
import dev.waterline.input.InputGate;
import org.springframework.stereotype.Component;

/**
 * Verifies and issues the HS256 JWTs that identify users (the {@code sub} claim).
 *
 * <p>Only the canonical compact form is accepted ({@link #canonical}): three base64url parts and
 * nothing else, the signature exactly the 43 characters that encode an HS256 MAC, with its unused
 * low bits zero. nimbus' decoder skips characters outside the alphabet and ignores those bits, so
 * without this check one valid token has many spellings that all verify (junk appended, a last
 * character varied), and each could be cached, logged or replayed as a different token.
 *
 * <p>Only HS256 is accepted: the key selector admits no other algorithm, and nimbus refuses
 * unsecured ({@code alg: none}) tokens outright. {@code exp} is required unless
 * {@code allow-no-exp}; {@code exp} and {@code nbf} are checked with {@code clock-skew};
 * {@code iss} and {@code aud} when configured. {@code sub} must be a user id (PROTOCOL.md §1:
 * 1-128 characters, no control characters, no U+0000, no unpaired surrogate).
 *
 * <p>A token that verified is remembered (by its text, for at most {@link #REMEMBERED_FOR}) with
 * its principal: a client presents the same token on its WebSocket upgrade and on every history
 * page, and a reconnect storm would otherwise parse and verify the HMAC of each again (~4 % of
 * the server's CPU in a 5,000-client storm). A remembered token is still refused once it is no
 * longer good; refusals are never remembered, so a forged token costs a full verification every
 * time. The cache is bounded by characters held ({@link #REMEMBERED_CHARS}), not by entries.
 */
@Component
public class Tokens {

    /** Longest user id (PROTOCOL.md §1). */
    public static final int MAX_SUBJECT = 128;
    /** Longest token text even looked at: anything longer is refused unparsed. */
    static final int MAX_LENGTH = 4096;

    static final long REMEMBERED_CHARS = 8_000_000;
    static final Duration REMEMBERED_FOR = Duration.ofMinutes(10);
    private static final Pattern COMPACT = Pattern.compile("[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.([A-Za-z0-9_-]{43})");

    private final DefaultJWTProcessor<SecurityContext> processor = new DefaultJWTProcessor<>();
    private final long skewMillis;
    private final Cache<String, Principal> verified = Caffeine.newBuilder()
            .maximumWeight(REMEMBERED_CHARS)
            .weigher((String text, Principal p) -> text.length() + p.userId().length())
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
        Set<String> required = new HashSet<>(Set.of("sub"));
        if (!properties.allowNoExp()) {
            required.add("exp");
        }
        JWTClaimsSet exact = properties.issuer() == null || properties.issuer().isBlank() ? null
                : new JWTClaimsSet.Builder().issuer(properties.issuer()).build();
        Set<String> audience = properties.audience() == null || properties.audience().isBlank() ? null
                : Set.of(properties.audience());
        DefaultJWTClaimsVerifier<SecurityContext> claims = new DefaultJWTClaimsVerifier<>(audience, exact, required, null);
        claims.setMaxClockSkew((int) properties.clockSkew().toSeconds());
        processor.setJWTClaimsSetVerifier(claims);
        // nimbus counts the skew in whole seconds; the remembered tokens use the same instant
        this.skewMillis = properties.clockSkew().toSeconds() * 1000;
        try {
            this.signer = new MACSigner(key);
        }
        catch (JOSEException e) {
            throw new IllegalStateException("Unusable JWT secret", e);
        }
        this.clock = clock;
    }

    /**
     * Whether {@code token} is in canonical compact form: three base64url parts, nothing around or
     * between them, and a signature whose 43 characters are exactly the encoding of its 32 bytes.
     */
    static boolean canonical(String token) {
        if (token.length() > MAX_LENGTH) {
            return false;
        }
        var m = COMPACT.matcher(token);
        if (!m.matches()) {
            return false;
        }
        String signature = m.group(1);
        byte[] mac = Base64.getUrlDecoder().decode(signature);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(mac).equals(signature);
    }

    /**
     * Who {@code token} speaks for, or empty when the token is not canonical, malformed, forged,
     * of another algorithm, expired, missing a required claim, or names no acceptable user id.
     */
    public Optional<Principal> verify(String token) {
        if (token == null || !canonical(token)) {
            return Optional.empty();
        }
        Principal known = verified.getIfPresent(token);
        if (known != null) {
            if (clock.millis() < known.goodUntilMillis()) {
                return Optional.of(known);
            }
            verified.invalidate(token);
            return Optional.empty();
        }
        try {
            JWTClaimsSet claims = processor.process(token, null);
            String sub = claims.getSubject();
            if (sub == null || sub.isBlank() || InputGate.idProblem(sub, 1, MAX_SUBJECT) != null) {
                return Optional.empty();
            }
            Date exp = claims.getExpirationTime();
            Principal p = new Principal(sub, exp == null ? Long.MAX_VALUE : exp.getTime() + skewMillis);
            verified.put(token, p);
            return Optional.of(p);
        }
        catch (ParseException | BadJOSEException | JOSEException | IllegalArgumentException e) {
            // a token that does not verify is the caller's answer (401, or no upgrade), not a failure of ours
            return Optional.empty();
        }
    }

    /** How many verified tokens are remembered now (for tests). */
    long remembered() {
        verified.cleanUp();
        return verified.estimatedSize();
    }

    public String issue(String userId, Duration ttl) {
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
