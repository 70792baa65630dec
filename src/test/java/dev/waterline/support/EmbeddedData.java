package dev.waterline.support;

import java.nio.file.Path;

/**
 * The folder of this test JVM's embedded PostgreSQL and Redis. The integration tests run in two
 * JVMs at once (pom.xml, failsafe's {@code forkCount}), each on a folder of its own, named by the
 * {@code waterline.embedded.data-dir} system property failsafe sets per fork; the same property
 * overrides {@code application-test.properties} for the Spring contexts, so a test that reaches
 * the embedded servers directly finds the ones its contexts use.
 */
public final class EmbeddedData {

    public static final Path DIR = Path.of(System.getProperty("waterline.embedded.data-dir", "target/embedded"));

    private EmbeddedData() {
    }
}
