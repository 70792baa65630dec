package dev.waterline.support;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.ActiveProfiles;

/**
 * A full server on a random port against the embedded PostgreSQL and Redis, which start once
 * per JVM under {@link EmbeddedData#DIR} and are shared by every context. A test class that needs
 * other settings starts its own context with {@code properties}; it must then also name its own
 * {@code waterline.embedded.database} and {@code spring.data.redis.database}, so that the
 * pollers of contexts kept alive by the test-context cache never claim each other's rows.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@ActiveProfiles("test")
public @interface WaterlineIntegrationTest {
}
