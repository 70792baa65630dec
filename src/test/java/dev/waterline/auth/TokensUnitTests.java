package dev.waterline.auth;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.Optional;

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
    static final Instant SOON = Instant.now().plus(Duration.ofHours(1));

    final Tokens tokens = new Tokens(properties(false, null, null), Clock.systemUTC());

    static AuthProperties properties(boolean allowNoExp, String issuer, String audience) {
        return new AuthProperties(SECRET, true, Duration.ofDays(7), allowNoExp, issuer, audience, Duration.ofSeconds(60));
    }

    static Optional<String> user(Tokens tokens, String token) {
        return tokens.verify(token).map(Principal::userId);
    }

    @Test
    void anIssuedTokenNamesItsUserAndItsExpiry() {
        Instant before = Instant.now();
        Optional<Principal> p = tokens.verify(tokens.issue("alice", Duration.ofMinutes(5)));
        assertThat(p).map(Principal::userId).contains("alice");
        assertThat(p.get().goodUntilMillis()).as("exp + the 60 s skew")
                .isBetween(before.plusSeconds(359).toEpochMilli(), Instant.now().plusSeconds(361).toEpochMilli());
    }

    @Test
    void theDevelopmentSecretPublishedInTheRepositoryIsRefusedUnlessDevTokensAreOn() {
        assertThatThrownBy(() -> new AuthProperties(AuthProperties.PUBLISHED_DEVELOPMENT_SECRET, false, Duration.ofDays(7), false,
                null, null, Duration.ofSeconds(60)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("WATERLINE_AUTH_JWT_SECRET");
        AuthProperties local = new AuthProperties(AuthProperties.PUBLISHED_DEVELOPMENT_SECRET, true, Duration.ofDays(7), false,
                null, null, Duration.ofSeconds(60));
        assertThat(user(new Tokens(local, Clock.systemUTC()), new Tokens(local, Clock.systemUTC()).issue("alice", Duration.ofMinutes(1))))
                .contains("alice");
    }

    @Test
    void anUnsecuredTokenIsRefused() {
        String none = new PlainJWT(new JWTClaimsSet.Builder().subject("alice").expirationTime(Date.from(SOON)).build()).serialize();
        assertThat(tokens.verify(none)).isEmpty();
    }

    @Test
    void aTokenOfAnotherHmacAlgorithmWithTheRightSecretIsRefused() throws Exception {
        assertThat(tokens.verify(signed(JWSAlgorithm.HS512, SECRET + SECRET, "alice", SOON))).isEmpty();
        assertThat(user(tokens, signed(JWSAlgorithm.HS256, SECRET, "alice", SOON))).contains("alice");
    }

    @Test
    void aTokenSignedWithAnotherSecretIsRefused() throws Exception {
        assertThat(tokens.verify(signed(JWSAlgorithm.HS256, "another-secret-that-is-long-enough-32", "alice", SOON))).isEmpty();
    }

    @Test
    void anExpiredTokenIsRefused() throws Exception {
        assertThat(tokens.verify(signed(JWSAlgorithm.HS256, SECRET, "alice", Instant.now().minus(Duration.ofMinutes(10))))).isEmpty();
    }

    @Test
    void aTokenWithoutExpIsRefusedUnlessAllowedAndThenNeverExpires() throws Exception {
        String noExp = signed(JWSAlgorithm.HS256, SECRET, "alice", null);
        assertThat(tokens.verify(noExp)).isEmpty();

        Tokens lenient = new Tokens(properties(true, null, null), Clock.systemUTC());
        assertThat(lenient.verify(noExp)).map(Principal::goodUntilMillis).contains(Long.MAX_VALUE);
    }

    @Test
    void issuerAndAudienceAreCheckedOnlyWhenConfigured() throws Exception {
        Tokens strict = new Tokens(properties(false, "https://issuer.example", "waterline"), Clock.systemUTC());
        String right = signed(JWSAlgorithm.HS256, SECRET, (JWTClaimsSet) new JWTClaimsSet.Builder().subject("alice")
                .expirationTime(Date.from(SOON)).issuer("https://issuer.example").audience(List.of("waterline", "other")).build());
        String wrongIssuer = signed(JWSAlgorithm.HS256, SECRET, (JWTClaimsSet) new JWTClaimsSet.Builder().subject("alice")
                .expirationTime(Date.from(SOON)).issuer("https://evil.example").audience("waterline").build());
        String wrongAudience = signed(JWSAlgorithm.HS256, SECRET, (JWTClaimsSet) new JWTClaimsSet.Builder().subject("alice")
                .expirationTime(Date.from(SOON)).issuer("https://issuer.example").audience("other").build());
        String neither = signed(JWSAlgorithm.HS256, SECRET, "alice", SOON);

        assertThat(user(strict, right)).contains("alice");
        assertThat(strict.verify(wrongIssuer)).isEmpty();
        assertThat(strict.verify(wrongAudience)).isEmpty();
        assertThat(strict.verify(neither)).isEmpty();
        assertThat(user(tokens, wrongIssuer)).as("not configured: not checked").contains("alice");
    }

    @Test
    void aTokenWithoutSubjectIsRefused() throws Exception {
        assertThat(tokens.verify(signed(JWSAlgorithm.HS256, SECRET, null, SOON))).isEmpty();
    }

    @Test
    void aSubjectOutsideTheUserIdAlphabetIsRefused() throws Exception {
        for (String sub : List.of("", "   ", "a".repeat(129), "nul\u0000here", "bell\u0007", "line\nbreak", "del\u007f",
                "c1\u0085")) {
            assertThat(tokens.verify(signed(JWSAlgorithm.HS256, SECRET, sub, SOON))).as("sub %s", sub.codePoints().boxed().toList())
                    .isEmpty();
        }
        // An unpaired surrogate cannot be encoded as UTF-8, so it can only arrive as a JSON escape.
        for (String escaped : List.of("lone\\ud800", "\\udc00lone", "x\\ud800\\ud800y")) {
            String payload = "{\"sub\":\"" + escaped + "\",\"exp\":" + SOON.getEpochSecond() + "}";
            assertThat(tokens.verify(rawSigned(payload))).as(payload).isEmpty();
        }
        assertThat(user(tokens, rawSigned("{\"sub\":\"pair\\ud83d\\ude00\",\"exp\":" + SOON.getEpochSecond() + "}")))
                .contains("pair\uD83D\uDE00");
        assertThat(user(tokens, signed(JWSAlgorithm.HS256, SECRET, "a".repeat(128), SOON))).isPresent();
        assertThat(user(tokens, signed(JWSAlgorithm.HS256, SECRET, "ünï \uD83D\uDE00 bob", SOON))).contains("ünï \uD83D\uDE00 bob");
    }

    @Test
    void aTokenWhoseHeaderWasSwappedToNoneIsRefused() throws Exception {
        String[] parts = signed(JWSAlgorithm.HS256, SECRET, "alice", SOON).split("\\.");
        String noneHeader = Base64.getUrlEncoder().withoutPadding()
                .encodeToString("{\"alg\":\"none\"}".getBytes(StandardCharsets.UTF_8));
        assertThat(tokens.verify(noneHeader + "." + parts[1] + "." + parts[2])).isEmpty();
        assertThat(tokens.verify(noneHeader + "." + parts[1] + ".")).isEmpty();
    }

    @Test
    void onlyTheCanonicalSpellingOfAValidTokenIsAccepted() throws Exception {
        String token = signed(JWSAlgorithm.HS256, SECRET, "alice", SOON);
        assertThat(user(tokens, token)).contains("alice");

        String sig = token.substring(token.lastIndexOf('.') + 1);
        char last = sig.charAt(sig.length() - 1);
        // the last character carries 2 unused bits: flipping them decodes to the same MAC
        String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        char sameBytes = alphabet.charAt(alphabet.indexOf(last) ^ 1);
        String variant = token.substring(0, token.length() - 1) + sameBytes;

        for (String junk : List.of(token + "!", token + "=", token + ".", token + " x", " " + token, token + " ",
                token + "\n", token.replaceFirst("\\.", ".~"), token + "AAAA", variant)) {
            assertThat(tokens.verify(junk)).as(junk).isEmpty();
        }
    }

    @Test
    void aRememberedTokenIsRefusedOnceItsExpiryAndSkewHavePassed() throws Exception {
        MovableClock clock = new MovableClock(Instant.now());
        Tokens remembering = new Tokens(properties(false, null, null), clock);
        String token = signed(JWSAlgorithm.HS256, SECRET, "alice", clock.instant().plus(Duration.ofMinutes(5)));

        assertThat(user(remembering, token)).contains("alice");
        clock.now = clock.now.plus(Duration.ofMinutes(5)).plusSeconds(59);
        assertThat(user(remembering, token)).as("within the 60 s skew").contains("alice");
        clock.now = clock.now.plusSeconds(2);
        assertThat(remembering.verify(token)).as("past exp + skew, though remembered as valid").isEmpty();
    }

    @Test
    void aForgedCopyOfARememberedTokenIsStillRefused() throws Exception {
        String token = signed(JWSAlgorithm.HS256, SECRET, "alice", SOON);
        assertThat(user(tokens, token)).contains("alice");
        String[] parts = token.split("\\.");
        String otherPayload = Base64.getUrlEncoder().withoutPadding()
                .encodeToString(("{\"sub\":\"mallory\",\"exp\":" + SOON.getEpochSecond() + "}").getBytes(StandardCharsets.UTF_8));
        assertThat(tokens.verify(parts[0] + "." + otherPayload + "." + parts[2])).isEmpty();
    }

    @Test
    void paddedCopiesOfATokenAreNeitherAcceptedNorRemembered() throws Exception {
        Tokens fresh = new Tokens(properties(false, null, null), Clock.systemUTC());
        String token = signed(JWSAlgorithm.HS256, SECRET, "alice", SOON);
        assertThat(user(fresh, token)).contains("alice");
        assertThat(fresh.remembered()).isEqualTo(1);

        for (int i = 1; i <= 50; i++) {
            // characters outside base64url, which a lenient decoder may skip
            assertThat(fresh.verify(token + "!".repeat(i))).isEmpty();
            assertThat(fresh.verify(token.replaceFirst("\\.", "." + "~".repeat(i)))).isEmpty();
        }

        assertThat(fresh.remembered()).isEqualTo(1);
        assertThat(user(fresh, token)).contains("alice");
    }

    @Test
    void aShortSecretIsRejectedAtStartup() {
        assertThatThrownBy(() -> new Tokens(new AuthProperties("short", false, Duration.ofDays(1), false, null, null,
                Duration.ofSeconds(60)), Clock.fixed(Instant.EPOCH, ZoneOffset.UTC)))
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
        return signed(alg, secret, claims.build());
    }

    /** An HS256 token over exactly this payload text (escapes and all). */
    static String rawSigned(String payloadJson) throws Exception {
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        String input = b64.encodeToString("{\"alg\":\"HS256\"}".getBytes(StandardCharsets.UTF_8)) + "."
                + b64.encodeToString(payloadJson.getBytes(StandardCharsets.UTF_8));
        javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
        mac.init(new javax.crypto.spec.SecretKeySpec(SECRET.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        return input + "." + b64.encodeToString(mac.doFinal(input.getBytes(StandardCharsets.US_ASCII)));
    }

    static String signed(JWSAlgorithm alg, String secret, JWTClaimsSet claims) throws Exception {
        SignedJWT jwt = new SignedJWT(new JWSHeader(alg), claims);
        jwt.sign(new MACSigner(secret.getBytes(StandardCharsets.UTF_8)));
        return jwt.serialize();
    }
}
