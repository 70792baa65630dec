package dev.waterline.auth;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.Date;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TokensUnitTests {

    static final String SECRET = "a-test-secret-that-is-long-enough-32+";
    final Tokens tokens = new Tokens(new AuthProperties(SECRET, true, Duration.ofDays(7)), Clock.systemUTC());

    @Test
    void anIssuedTokenNamesItsUser() {
        assertThat(tokens.verify(tokens.issue("alice", Duration.ofMinutes(5)))).contains("alice");
    }

    @Test
    void anUnsecuredTokenIsRefused() {
        String none = new PlainJWT(new JWTClaimsSet.Builder().subject("alice").build()).serialize();
        assertThat(tokens.verify(none)).isEmpty();
    }

    @Test
    void aTokenOfAnotherHmacAlgorithmWithTheRightSecretIsRefused() throws Exception {
        assertThat(tokens.verify(signed(JWSAlgorithm.HS512, SECRET + SECRET, "alice", null))).isEmpty();
        assertThat(tokens.verify(signed(JWSAlgorithm.HS256, SECRET, "alice", null))).contains("alice");
    }

    @Test
    void aTokenSignedWithAnotherSecretIsRefused() throws Exception {
        assertThat(tokens.verify(signed(JWSAlgorithm.HS256, "another-secret-that-is-long-enough-32", "alice", null))).isEmpty();
    }

    @Test
    void anExpiredTokenIsRefusedButOneWithoutExpIsAccepted() throws Exception {
        Instant past = Instant.now().minus(Duration.ofMinutes(10));
        assertThat(tokens.verify(signed(JWSAlgorithm.HS256, SECRET, "alice", past))).isEmpty();
        assertThat(tokens.verify(signed(JWSAlgorithm.HS256, SECRET, "alice", null))).contains("alice");
    }

    @Test
    void aTokenWithoutSubjectIsRefused() throws Exception {
        assertThat(tokens.verify(signed(JWSAlgorithm.HS256, SECRET, null, null))).isEmpty();
    }

    @Test
    void aTokenWhoseHeaderWasSwappedToNoneIsRefused() throws Exception {
        String[] parts = signed(JWSAlgorithm.HS256, SECRET, "alice", null).split("\\.");
        String noneHeader = Base64.getUrlEncoder().withoutPadding()
                .encodeToString("{\"alg\":\"none\"}".getBytes(StandardCharsets.UTF_8));
        assertThat(tokens.verify(noneHeader + "." + parts[1] + "." + parts[2])).isEmpty();
        assertThat(tokens.verify(noneHeader + "." + parts[1] + ".")).isEmpty();
    }

    @Test
    void aRememberedTokenIsRefusedOnceItsExpiryAndSkewHavePassed() throws Exception {
        MovableClock clock = new MovableClock(Instant.now());
        Tokens remembering = new Tokens(new AuthProperties(SECRET, true, Duration.ofDays(7)), clock);
        String token = signed(JWSAlgorithm.HS256, SECRET, "alice", clock.instant().plus(Duration.ofMinutes(5)));

        assertThat(remembering.verify(token)).contains("alice");
        clock.now = clock.now.plus(Duration.ofMinutes(5)).plusSeconds(59);
        assertThat(remembering.verify(token)).as("within nimbus' 60 s skew").contains("alice");
        clock.now = clock.now.plusSeconds(2);
        assertThat(remembering.verify(token)).as("past exp + skew, though remembered as valid").isEmpty();
    }

    @Test
    void aForgedCopyOfARememberedTokenIsStillRefused() throws Exception {
        String token = signed(JWSAlgorithm.HS256, SECRET, "alice", null);
        assertThat(tokens.verify(token)).contains("alice");
        String[] parts = token.split("\\.");
        String otherPayload = Base64.getUrlEncoder().withoutPadding()
                .encodeToString("{\"sub\":\"mallory\"}".getBytes(StandardCharsets.UTF_8));
        assertThat(tokens.verify(parts[0] + "." + otherPayload + "." + parts[2])).isEmpty();
        assertThat(tokens.verify(" " + token + " ")).as("the same token, padded").contains("alice");
    }

    @Test
    void onlyCanonicalTokensAreRememberedSoPaddedCopiesCannotFillTheHeap() throws Exception {
        Tokens fresh = new Tokens(new AuthProperties(SECRET, true, Duration.ofDays(7)), Clock.systemUTC());
        String token = signed(JWSAlgorithm.HS256, SECRET, "alice", null);
        assertThat(fresh.verify(token)).contains("alice");
        assertThat(fresh.remembered()).isEqualTo(1);

        for (int i = 1; i <= 50; i++) {
            // characters outside base64url, which a lenient decoder may skip
            fresh.verify(token + "!".repeat(i));
            fresh.verify(token.replaceFirst("\\.", "." + "~".repeat(i)));
        }

        assertThat(fresh.remembered()).isEqualTo(1);
        assertThat(fresh.verify(token)).contains("alice");
    }

    @Test
    void aShortSecretIsRejectedAtStartup() {
        assertThatThrownBy(() -> new Tokens(new AuthProperties("short", false, Duration.ofDays(1)), Clock.fixed(Instant.EPOCH, ZoneOffset.UTC)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("at least 32 bytes");
    }

    /** A clock the test moves by hand. */
    static final class MovableClock extends Clock {
        volatile Instant now;

        MovableClock(Instant now) {
            this.now = now;
        }

        @Override
        public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    private static String signed(JWSAlgorithm alg, String secret, String sub, Instant exp) throws Exception {
        JWTClaimsSet.Builder claims = new JWTClaimsSet.Builder().subject(sub);
        if (exp != null) {
            claims.expirationTime(Date.from(exp));
        }
        SignedJWT jwt = new SignedJWT(new JWSHeader(alg), claims.build());
        jwt.sign(new MACSigner(secret.getBytes(StandardCharsets.UTF_8)));
        return jwt.serialize();
    }
}
