package dev.waterline.load;

import java.nio.file.Files;
import java.nio.file.Path;

import dev.waterline.load.streams.StreamLoad;
import dev.waterline.support.WaterlineIntegrationTest;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.test.web.server.LocalServerPort;
import picocli.CommandLine;

import static org.assertj.core.api.Assertions.assertThat;

/** A second or so of each shape of the streams load against a real server, every chunk reconciled. */
@WaterlineIntegrationTest
class StreamLoadSmokeIntegrationTests {

    @LocalServerPort
    int port;

    @ParameterizedTest
    @ValueSource(strings = {
            "--mode single --duration PT1S",
            "--mode many --streams 20,40 --rate 2 --duration PT3S",
            "--mode replay --chunks 3000 --readers 2",
            "--mode fanout --subscribers 3,30 --chunks 60 --rate 50"})
    void eachShapeOfTheStreamsLoadReconcilesEveryChunkForEveryReader(String args, @TempDir Path out) throws Exception {
        StreamLoad load = new StreamLoad();
        String[] given = (args + " --urls http://127.0.0.1:" + port + " --drain PT30S --out " + out).split(" ");
        new CommandLine(load).parseArgs(given);

        int exit = load.call();

        String report = Files.readString(out.resolve("report.md"));
        assertThat(exit).as(report).isZero();
        assertThat(report).contains("Reconciled: every stored chunk reached every reader once, in order.")
                .doesNotContain("RECONCILIATION FAILED")
                .as("no refusal, error or close in any run").doesNotContain("Seen:");
        assertThat(report).containsPattern("chunks|readers");
    }
}
