package dev.waterline.auth;

import java.nio.charset.StandardCharsets;
import java.text.ParseException;
import java.time.Clock;
import java.util.Date;
import java.util.Optional;
import java.util.Set;

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
 */
@Component
public class Tokens {

    /** Longest user id, the same bound every endpoint applies to ids in request bodies. */
    public static final int MAX_SUBJECT = 128;

    private final DefaultJWTProcessor<SecurityContext> processor = new DefaultJWTProcessor<>();
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
        processor.setJWTClaimsSetVerifier(new DefaultJWTClaimsVerifier<>(null, Set.of("sub")));
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
        try {
            String sub = processor.process(token.strip(), null).getSubject();
            return sub == null || sub.isBlank() || sub.length() > MAX_SUBJECT ? Optional.empty() : Optional.of(sub);
        }
        catch (ParseException | BadJOSEException | JOSEException e) {
            return Optional.empty();
        }
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
