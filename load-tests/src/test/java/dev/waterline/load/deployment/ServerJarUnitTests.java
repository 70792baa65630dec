package dev.waterline.load.deployment;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

class ServerJarUnitTests {

    private final ServerProcess.JarConverter converter = new ServerProcess.JarConverter();

    @Test
    void aPatternStandsForTheMostRecentlyBuiltJarItMatches(@TempDir Path dir) throws Exception {
        Path older = Files.createFile(dir.resolve("waterline-0.1.0-SNAPSHOT.jar"));
        Path newer = Files.createFile(dir.resolve("waterline-0.2.0.jar"));
        Files.setLastModifiedTime(older, FileTime.from(Instant.parse("2026-01-01T00:00:00Z")));
        Files.setLastModifiedTime(newer, FileTime.from(Instant.parse("2026-02-01T00:00:00Z")));
        Files.createFile(dir.resolve("waterline-0.2.0.jar.original"));

        assertThat(converter.convert(dir + "/waterline-*.jar")).isEqualTo(newer);
    }

    @Test
    void aPatternThatMatchesNothingAndAPlainPathAreKeptAsGiven(@TempDir Path dir) throws Exception {
        assertThat(converter.convert(dir + "/waterline-*.jar")).isEqualTo(dir.resolve("waterline-*.jar"));
        assertThat(converter.convert(dir + "/missing/waterline-*.jar")).isEqualTo(dir.resolve("missing/waterline-*.jar"));
        assertThat(converter.convert("target/any.jar")).isEqualTo(Path.of("target/any.jar"));
    }
}
