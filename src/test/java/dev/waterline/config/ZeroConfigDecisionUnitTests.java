package dev.waterline.config;

import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The zero-configuration decision is taken from the effective configuration: any spelling of any
 * property that names a PostgreSQL or a Redis counts, environment variables included, so that a
 * server pointed at a real database never starts an embedded one beside it, never counts as
 * zero-configuration and never mints dev tokens by default.
 */
class ZeroConfigDecisionUnitTests {

    static StandardEnvironment env(Map<String, Object> environmentVariables, Map<String, Object> properties) {
        StandardEnvironment env = new StandardEnvironment();
        env.getPropertySources().remove(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME);
        env.getPropertySources().addLast(new SystemEnvironmentPropertySource("env", environmentVariables));
        env.getPropertySources().addFirst(new MapPropertySource("props", properties));
        ConfigurationPropertySources.attach(env);
        return env;
    }

    @Test
    void aDatabaseNamedOnlyThroughHikarisJdbcUrlInTheEnvironmentIsNamed() {
        var env = env(Map.of("SPRING_DATASOURCE_HIKARI_JDBC_URL", "jdbc:postgresql://db/x"), Map.of());
        assertThat(EmbeddedServers.named(env, EmbeddedServers.POSTGRES_NAMES)).isTrue();
        assertThat(EmbeddedServers.named(env, EmbeddedServers.REDIS_NAMES)).isFalse();
    }

    @Test
    void everyWayOfNamingADatabaseCounts() {
        for (String name : new String[] {"spring.datasource.url", "spring.datasource.hikari.jdbc-url",
                "spring.datasource.hikari.jdbcUrl", "spring.datasource.jndi-name",
                "spring.datasource.hikari.data-source-class-name", "spring.datasource.hikari.data-source-properties.serverName",
                "spring.flyway.url"}) {
            assertThat(EmbeddedServers.named(env(Map.of(), Map.of(name, "x")), EmbeddedServers.POSTGRES_NAMES)).as(name).isTrue();
        }
        for (String variable : new String[] {"SPRING_DATASOURCE_URL", "SPRING_DATASOURCE_JNDI_NAME", "SPRING_FLYWAY_URL"}) {
            assertThat(EmbeddedServers.named(env(Map.of(variable, "x"), Map.of()), EmbeddedServers.POSTGRES_NAMES))
                    .as(variable).isTrue();
        }
    }

    @Test
    void everyWayOfNamingARedisCounts() {
        for (String name : new String[] {"spring.data.redis.host", "spring.data.redis.port", "spring.data.redis.url",
                "spring.data.redis.sentinel.master", "spring.data.redis.cluster.nodes"}) {
            assertThat(EmbeddedServers.named(env(Map.of(), Map.of(name, "x")), EmbeddedServers.REDIS_NAMES)).as(name).isTrue();
        }
        assertThat(EmbeddedServers.named(env(Map.of("SPRING_DATA_REDIS_URL", "redis://r"), Map.of()), EmbeddedServers.REDIS_NAMES))
                .isTrue();
    }

    @Test
    void settingsThatNameNoServerLeaveTheZeroConfigurationModeOn() {
        var env = env(Map.of("SPRING_DATASOURCE_HIKARI_MAXIMUM_POOL_SIZE", "4"),
                Map.of("spring.data.redis.database", "3", "spring.datasource.username", "me", "server.port", "9000"));
        assertThat(EmbeddedServers.named(env, EmbeddedServers.POSTGRES_NAMES)).isFalse();
        assertThat(EmbeddedServers.named(env, EmbeddedServers.REDIS_NAMES)).isFalse();
    }

    @Test
    void whenBothAreNamedNothingIsEmbeddedAndDevTokensStayOff() {
        var env = env(Map.of("SPRING_DATASOURCE_HIKARI_JDBC_URL", "jdbc:postgresql://db/x", "SPRING_DATA_REDIS_HOST", "cache"),
                Map.of());
        new EmbeddedServers(supplier -> supplier.get()).postProcessEnvironment(env, null);

        assertThat(env.getProperty("waterline.embedded.active")).isNull();
        assertThat(env.getProperty("waterline.auth.dev-tokens")).isNull();
        assertThat(env.getProperty("server.address")).isNull();
        assertThat(env.getProperty("spring.datasource.url")).as("Spring Boot's url follows Hikari's")
                .isEqualTo("jdbc:postgresql://db/x");
    }

    @Test
    void hikarisJdbcUrlInAnySpellingBecomesSpringBootsUrl() {
        var env = env(Map.of("SPRING_DATA_REDIS_URL", "redis://cache"),
                Map.of("spring.datasource.hikari.jdbcUrl", "jdbc:postgresql://db/camel"));
        new EmbeddedServers(supplier -> supplier.get()).postProcessEnvironment(env, null);
        assertThat(env.getProperty("spring.datasource.url")).isEqualTo("jdbc:postgresql://db/camel");
        assertThat(env.getProperty("waterline.embedded.active")).isNull();
    }

    /**
     * A probe named only the database and found an embedded Redis, with no password, started beside
     * it. PROTOCOL.md §1: naming either turns the embedded servers off; naming one alone is refused
     * at start, with how to fix it, rather than pairing a real database with an embedded Redis (or
     * with whatever Redis answers on localhost).
     */
    @Test
    void namingOnlyOneOfThemIsRefusedAtStartAndNothingIsEmbedded() {
        var onlyDatabase = env(Map.of("SPRING_DATASOURCE_URL", "jdbc:postgresql://db/x"), Map.of());
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new EmbeddedServers(supplier -> supplier.get())
                        .postProcessEnvironment(onlyDatabase, null))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("PostgreSQL is named but Redis is not")
                .hasMessageContaining("name both");
        assertThat(onlyDatabase.getProperty("spring.data.redis.port")).as("no embedded Redis").isNull();

        var onlyRedis = env(Map.of(), Map.of("spring.data.redis.host", "cache"));
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new EmbeddedServers(supplier -> supplier.get())
                        .postProcessEnvironment(onlyRedis, null))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("Redis is named but PostgreSQL is not");
        assertThat(onlyRedis.getProperty("spring.datasource.url")).as("no embedded PostgreSQL").isNull();
    }
}
