package dev.waterline;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.testcontainers.service.connection.ServiceConnection;
import org.springframework.context.annotation.Bean;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.postgresql.PostgreSQLContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * {@code ./mvnw spring-boot:test-run}: Waterline against PostgreSQL 17 and Redis 7 in containers
 * (Testcontainers, connected through {@code @ServiceConnection}), for a developer with Docker who
 * wants the production shape of the stack without installing anything. The default
 * {@code ./mvnw verify} does not use it: the tests run on the embedded servers, with no Docker.
 *
 * <p>Image names come from {@code POSTGRES_IMAGE} and {@code REDIS_IMAGE} (defaults
 * {@code postgres:17}, {@code redis:7}), so it also runs where registries cannot be reached, on
 * the stand-ins {@code deploy/local-images.sh} builds. There, also set
 * {@code TESTCONTAINERS_RYUK_DISABLED=true} (the reaper's image cannot be pulled either; the
 * containers are then stopped when the application's context closes) and, when this process
 * itself runs inside a container, {@code TESTCONTAINERS_HOST_OVERRIDE=localhost} (or Testcontainers
 * looks for the engine's gateway with an alpine container). {@code deploy/compose-smoke.sh} runs
 * it that way.
 *
 * <p>As the zero-configuration mode, it is for one developer's machine: dev tokens on, the
 * published development secret unless {@code WATERLINE_AUTH_JWT_SECRET} is set (both said loudly
 * in the log), loopback only, and the home page at {@code /}.
 */
public final class TestWaterlineApplication {

    private TestWaterlineApplication() {
    }

    public static void main(String[] args) {
        // the settings are in application-containers.properties: below the environment and the
        // command line, so WATERLINE_AUTH_JWT_SECRET or --server.port=… override them as usual
        SpringApplication.from(WaterlineApplication::main).with(Containers.class).withAdditionalProfiles("containers")
                .run(args);
    }

    @TestConfiguration(proxyBeanMethods = false)
    static class Containers {

        @Bean
        @ServiceConnection
        PostgreSQLContainer postgres() {
            return new PostgreSQLContainer(image("POSTGRES_IMAGE", "postgres:17").asCompatibleSubstituteFor("postgres"))
                    .withDatabaseName("waterline");
        }

        @Bean
        @ServiceConnection(name = "redis")
        GenericContainer<?> redis() {
            return new GenericContainer<>(image("REDIS_IMAGE", "redis:7")).withExposedPorts(6379);
        }

        private static DockerImageName image(String variable, String otherwise) {
            String name = System.getenv(variable);
            return DockerImageName.parse(name == null || name.isBlank() ? otherwise : name);
        }
    }
}
