package dev.waterline.load.deployment;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/**
 * The server jar as the harness launches it: the packaged jar extracted once per harness process
 * into Spring Boot's plain layout ({@code -Djarmode=tools extract}: a thin jar whose manifest
 * lists {@code lib/}), as the container image and the JavaScript client's tests run it. The
 * packaged jar's nested-jar class loader can deadlock a starting server whose virtual threads
 * load classes while requests arrive (spring-projects/spring-boot#51463; seen here as a restarted
 * server that never answered its readiness probe); the extracted layout loads classes with the
 * JDK's own loader. docs/OPERATIONS.md, "Running the packaged jar". The folder is removed when
 * the harness ends.
 */
final class ExtractedJar {

    private static final Map<Path, Path> EXTRACTED = new ConcurrentHashMap<>();

    private ExtractedJar() {
    }

    /** The thin jar to run for this packaged jar, extracting it on the first call. */
    static Path of(Path packagedJar) {
        return EXTRACTED.computeIfAbsent(packagedJar.toAbsolutePath().normalize(), ExtractedJar::extract);
    }

    private static Path extract(Path jar) {
        try {
            Path dir = Files.createTempDirectory("waterline-jar-");
            Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().unstarted(() -> delete(dir)));
            Path log = dir.resolve("extract.log");
            String java = ProcessHandle.current().info().command().orElse("java");
            Process p = new ProcessBuilder(java, "-Djarmode=tools", "-jar", jar.toString(), "extract", "--destination", dir.resolve("app").toString())
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            int rc = p.waitFor();
            Path thin = dir.resolve("app").resolve(jar.getFileName());
            if (rc != 0 || !Files.isRegularFile(thin)) {
                throw new IllegalStateException("extracting " + jar + " failed (exit " + rc + "): " + Files.readString(log).strip());
            }
            return thin;
        }
        catch (IOException e) {
            throw new UncheckedIOException("extracting " + jar, e);
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while extracting " + jar, e);
        }
    }

    private static void delete(Path dir) {
        try (Stream<Path> all = Files.walk(dir)) {
            all.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
        catch (IOException e) {
            System.err.println("could not remove " + dir + ": " + e.getMessage());
        }
    }
}
