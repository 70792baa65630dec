package dev.waterline.lifecycle;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The out-of-memory guard in a JVM started without {@code -XX:+ExitOnOutOfMemoryError} (as a plain
 * {@code java -jar} is): an {@link OutOfMemoryError} that ends a platform thread ends the process
 * with status 3, instead of leaving it up without that thread.
 */
class FatalErrorsUnitTests {

    private static Process probe(String... args) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new java.util.ArrayList<>(List.of(java, "-Xmx32m", "-cp", System.getProperty("java.class.path"),
                OutOfMemoryProbe.class.getName()));
        command.addAll(List.of(args));
        return new ProcessBuilder(command).redirectErrorStream(true).start();
    }

    @Test
    void anOutOfMemoryErrorThatEndsAThreadHaltsTheProcessWithStatus3() throws Exception {
        Process p = probe();
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("the process ended").isTrue();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.exitValue()).as(out).isEqualTo(FatalErrors.OUT_OF_MEMORY_STATUS);
        assertThat(out).contains("OutOfMemoryError ended a thread").doesNotContain("still alive");
    }

    @Test
    void withoutTheGuardTheSameProcessOutlivesItsDeadThread() throws Exception {
        // the failure this guards against, shown on the same probe: the JVM stays up without the thread
        Process p = probe("unguarded");
        try {
            assertThat(p.waitFor(5, TimeUnit.SECONDS)).as("still running after the thread died").isFalse();
        }
        finally {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void anOutOfMemoryErrorIsRecognisedAsTheCauseOfAnotherThrowable() {
        assertThat(FatalErrors.outOfMemory(new IllegalStateException("wrapped", new OutOfMemoryError("Java heap space")))).isTrue();
        assertThat(FatalErrors.outOfMemory(new StackOverflowError())).isFalse();
    }
}
