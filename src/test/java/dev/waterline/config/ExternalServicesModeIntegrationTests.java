package dev.waterline.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import dev.waterline.WaterlineApplication;
import dev.waterline.auth.Tokens;
import dev.waterline.support.Api;
import dev.waterline.support.EmbeddedData;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.Environment;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A server whose database is named only by the environment variable
 * {@code SPRING_DATASOURCE_HIKARI_JDBC_URL} (and whose Redis is named too): it uses them, starts
 * nothing embedded, is not in the zero-configuration mode, answers the dev-token endpoint 404 and
 * listens on every interface as configured. The probe found such a server counting as
 * zero-configuration and minting tokens for any user. The server is started here as a process
 * would start it, with those variables in its environment, since the decision is taken before
 * any test property could be added.
 */
class ExternalServicesModeIntegrationTests {

    static final String SECRET = "an-operator-chosen-secret-of-32-bytes-at-least";

    @Test
    void aDatabaseNamedThroughHikarisJdbcUrlIsUsedAndNothingIsEmbeddedOrHandedOut() {
        Path data = EmbeddedData.DIR;
        int pg = EmbeddedServers.postgresPort(data, false, "external_mode");
        int redis = EmbeddedServers.redisPort(data, false);
        StandardEnvironment env = new StandardEnvironment();
        env.getPropertySources().addAfter(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                new SystemEnvironmentPropertySource("processEnvironment", Map.of(
                        "SPRING_DATASOURCE_HIKARI_JDBC_URL", "jdbc:postgresql://127.0.0.1:" + pg + "/external_mode",
                        "SPRING_DATASOURCE_USERNAME", "postgres",
                        "SPRING_DATA_REDIS_HOST", "127.0.0.1",
                        "SPRING_DATA_REDIS_PORT", Integer.toString(redis),
                        "SPRING_DATA_REDIS_DATABASE", "13",
                        "WATERLINE_AUTH_JWT_SECRET", SECRET)));
        SpringApplication app = new SpringApplication(WaterlineApplication.class);
        app.setEnvironment(env);
        app.setAdditionalProfiles("test");
        try (ConfigurableApplicationContext context = app.run("--server.port=0")) {
            Environment effective = context.getEnvironment();
            int port = effective.getProperty("local.server.port", Integer.class);
            Api api = new Api(port);

            assertThat(effective.getProperty("waterline.embedded.active")).isNull();
            assertThat(effective.getProperty("waterline.auth.dev-tokens", Boolean.class, false)).isFalse();
            assertThat(effective.getProperty("server.address")).isNull();
            assertThat(api.post("/api/dev/tokens", null, Map.of("userId", "mallory")).status()).isEqualTo(404);
            assertThat(api.get("/", null).status()).as("no demo outside the zero-configuration mode").isEqualTo(404);
            assertThat(api.get("/start", null).status()).as("no start page either").isEqualTo(404);
            assertThat(api.get("/client/index.js", null).status()).as("nor the client's files").isEqualTo(404);
            assertThat(api.get("/docs/PROTOCOL.md", null).status()).as("the contract is public in every mode").isEqualTo(200);
            assertThat(api.get("/docs/asyncapi.yaml", null).status()).isEqualTo(200);

            String token = context.getBean(Tokens.class).issue("ext-alice", Duration.ofMinutes(5));
            String chat = api.createChat(token, "ext-bob");
            JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
            assertThat(jdbc.queryForObject("SELECT current_database()", String.class)).isEqualTo("external_mode");
            assertThat(jdbc.queryForObject("SELECT count(*) FROM chats WHERE chat_id = ?", Long.class, chat)).isEqualTo(1);
        }
    }
}
