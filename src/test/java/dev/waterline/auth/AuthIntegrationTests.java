package dev.waterline.auth;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.Map;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;
import dev.waterline.support.Api;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.TestPropertySource;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * PROTOCOL.md §1. Every forged token differs from a token the server accepts in exactly one
 * respect (secret, algorithm, expiry, ...), which {@link #aTokenMintedHereWithTheRealSecretIsAccepted}
 * establishes: a refusal is then caused by that respect and nothing else.
 */
@WaterlineIntegrationTest
class AuthIntegrationTests {

    private static final String OTHER_SECRET = "a-different-secret-that-is-also-at-least-64-bytes-long-0123456789";

    @LocalServerPort
    int port;

    @Value("${waterline.auth.jwt-secret}")
    String secret;

    Api api;

    @BeforeEach
    void setUp() {
        api = new Api(port);
    }

    @Test
    void aValidDevTokenIsAcceptedByRest() {
        String token = api.token("auth-dev-alice");

        Api.Response r = api.get("/api/chats", token);

        assertThat(r.status()).isEqualTo(200);
        assertThat(r.body().get("chats").isArray()).isTrue();
    }

    @Test
    void aTokenMintedHereWithTheRealSecretIsAccepted() {
        String token = sign(JWSAlgorithm.HS256, secret, claims("auth-minted").expirationTime(inMinutes(10)).build());

        assertThat(api.get("/api/chats", token).status()).isEqualTo(200);
        assertThat(WsClient.handshakeStatus(port, token, null)).isEqualTo(-1);
    }

    @Test
    void aRestCallWithoutATokenIsRefused() {
        Api.Response r = api.get("/api/chats", null);

        assertThat(r.status()).isEqualTo(401);
        assertThat(r.body().get("error").asString()).isEqualTo("unauthorized");
    }

    @Test
    void aHandshakeWithoutATokenIsRefusedWithoutUpgrade() {
        assertThat(WsClient.handshakeStatus(port, null, null)).isEqualTo(401);
    }

    @Test
    void aMalformedTokenIsRefused() {
        assertRefusedEverywhere("not-a-jwt");
        assertRefusedEverywhere("aaaa.bbbb.cccc");
    }

    @Test
    void aTokenSignedWithAnotherSecretIsRefused() {
        assertRefusedEverywhere(sign(JWSAlgorithm.HS256, OTHER_SECRET, claims("auth-forged").build()));
    }

    @Test
    void anUnsecuredAlgNoneTokenIsRefused() {
        String token = new PlainJWT(claims("auth-none").build()).serialize();
        assertThat(token).endsWith(".");

        assertRefusedEverywhere(token);
    }

    @Test
    void aTokenSignedWithHs384AndTheRealSecretIsRefused() {
        assertRefusedEverywhere(sign(JWSAlgorithm.HS384, secret, claims("auth-hs384").build()));
    }

    @Test
    void aTokenSignedWithHs512AndTheRealSecretIsRefused() {
        assertRefusedEverywhere(sign(JWSAlgorithm.HS512, secret, claims("auth-hs512").build()));
    }

    @Test
    void anExpiredTokenIsRefused() {
        // Well past nimbus' 60 s clock-skew allowance.
        Date expired = Date.from(Instant.now().minus(Duration.ofMinutes(10)));

        assertRefusedEverywhere(sign(JWSAlgorithm.HS256, secret, claims("auth-expired").expirationTime(expired).build()));
    }

    @Test
    void aTokenWithoutExpIsRefused() {
        assertRefusedEverywhere(sign(JWSAlgorithm.HS256, secret, claims("auth-no-exp").build()));
    }

    @Test
    void aValidTokenWithAnythingAppendedIsRefused() {
        String token = sign(JWSAlgorithm.HS256, secret, claims("auth-junk").expirationTime(inMinutes(10)).build());
        assertThat(api.get("/api/chats", token).status()).as("the token itself").isEqualTo(200);
        for (String junk : new String[] {token + "AAAA", token + "~", token + ".", token + "_-"}) {
            assertRefusedEverywhere(junk);
        }
    }

    @Test
    void aTokenWithoutSubjectIsRefused() {
        JWTClaimsSet noSubject = new JWTClaimsSet.Builder().issueTime(new Date()).build();

        assertRefusedEverywhere(sign(JWSAlgorithm.HS256, secret, noSubject));
    }

    @Test
    void aValidTokenInTheAuthorizationHeaderUpgradesAndIsWelcomed() {
        try (WsClient ws = WsClient.connect(port, api.token("auth-ws-header"))) {
            JsonNode welcome = ws.next("welcome");

            assertThat(welcome.get("userId").asString()).isEqualTo("auth-ws-header");
            assertThat(welcome.get("sessionId").asString()).isNotBlank();
            assertThat(welcome.get("limits").isObject()).isTrue();
        }
    }

    @Test
    void aValidTokenInTheAccessTokenQueryParameterUpgradesAndIsWelcomed() {
        try (WsClient ws = WsClient.connectWithQueryToken(port, api.token("auth-ws-query"))) {
            JsonNode welcome = ws.next("welcome");

            assertThat(welcome.get("userId").asString()).isEqualTo("auth-ws-query");
        }
    }

    /** REST, the handshake's Authorization header and its access_token parameter all answer 401. */
    private void assertRefusedEverywhere(String token) {
        SoftAssertions softly = new SoftAssertions();
        softly.assertThat(api.get("/api/chats", token).status()).as("REST status").isEqualTo(401);
        softly.assertThat(WsClient.handshakeStatus(port, token, null)).as("handshake status, token in header").isEqualTo(401);
        softly.assertThat(WsClient.handshakeStatus(port, null, token)).as("handshake status, token in query").isEqualTo(401);
        softly.assertAll();
    }

    static JWTClaimsSet.Builder claims(String subject) {
        return new JWTClaimsSet.Builder().subject(subject).issueTime(new Date());
    }

    static Date inMinutes(int minutes) {
        return Date.from(Instant.now().plus(Duration.ofMinutes(minutes)));
    }

    static String sign(JWSAlgorithm algorithm, String secret, JWTClaimsSet claims) {
        try {
            SignedJWT jwt = new SignedJWT(new JWSHeader(algorithm), claims);
            jwt.sign(new MACSigner(secret.getBytes(StandardCharsets.UTF_8)));
            return jwt.serialize();
        }
        catch (JOSEException e) {
            throw new IllegalStateException("could not sign a test token with " + algorithm, e);
        }
    }

    /** Its own context: dev tokens off, on its own database and Redis db (see {@link WaterlineIntegrationTest}). */
    @Nested
    @WaterlineIntegrationTest
    @TestPropertySource(properties = {"waterline.auth.dev-tokens=false", "waterline.embedded.database=auth_nodev",
            "spring.data.redis.database=3"})
    class WithDevTokensDisabled {

        @LocalServerPort
        int port;

        @Value("${waterline.auth.jwt-secret}")
        String secret;

        @Test
        void theDevTokenEndpointAnswers404() {
            Api api = new Api(port);

            Api.Response r = api.post("/api/dev/tokens", null, Map.of("userId", "auth-nodev-alice"));

            assertThat(r.status()).isEqualTo(404);
            assertThat(r.body().has("token")).isFalse();
        }

        @Test
        void aTokenSignedWithTheSecretStillWorks() {
            Api api = new Api(port);
            String token = sign(JWSAlgorithm.HS256, secret, claims("auth-nodev-bob").expirationTime(inMinutes(10)).build());

            assertThat(api.get("/api/chats", token).status()).isEqualTo(200);
            try (WsClient ws = WsClient.connect(port, token)) {
                assertThat(ws.next("welcome").get("userId").asString()).isEqualTo("auth-nodev-bob");
            }
        }
    }
}
