package dev.waterline.metrics;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The alert rules ({@code deploy/prometheus/alerts.yml}) are valid Prometheus rules and fire when
 * they should ({@code alerts.test.yml}: promtool's own rule tests, with input series for each
 * alert). Needs {@code promtool} (Debian: {@code apt-get install prometheus}); where it is not
 * installed the test is skipped, and says so in the test report.
 */
class AlertRulesUnitTests {

    static Path promtool() {
        return Stream.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
                .map(dir -> Path.of(dir, "promtool")).filter(Files::isExecutable).findFirst().orElse(null);
    }

    static String run(Path promtool, String... args) throws Exception {
        List<String> cmd = new java.util.ArrayList<>();
        cmd.add(promtool.toString());
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(new File("deploy/prometheus")).redirectErrorStream(true).start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("promtool finished").isTrue();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as(out).isZero();
        return out;
    }

    @Test
    void theAlertRulesAreValidAndFireWhenTheyShould() throws Exception {
        Path promtool = promtool();
        assumeTrue(promtool != null, "promtool is not installed (Debian: apt-get install prometheus): the alert rules are not checked");
        assertThat(run(promtool, "check", "rules", "alerts.yml")).contains("SUCCESS: 7 rules found");
        assertThat(run(promtool, "test", "rules", "alerts.test.yml")).contains("SUCCESS");
    }
}
