package dev.waterline.load;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import dev.waterline.load.chat.LoadRun;
import dev.waterline.load.clients.WsLink;
import dev.waterline.load.run.LoadCli;
import dev.waterline.load.run.LoadConfig;
import dev.waterline.load.run.Report;
import dev.waterline.support.WaterlineIntegrationTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.boot.test.web.server.LocalServerPort;
import picocli.CommandLine;

import static org.assertj.core.api.Assertions.assertThat;

/** A few seconds of the load generator, with misbehaving clients, against a real server. */
@WaterlineIntegrationTest
class LoadGeneratorSmokeIntegrationTests {

    @LocalServerPort
    int port;

    @ParameterizedTest
    @EnumSource(WsLink.Kind.class)
    void aShortMixedRunWithReconnectingAndNonAckingClientsReconcilesWithNothingLost(WsLink.Kind transport, @TempDir Path out)
            throws Exception {
        LoadCli cli = new LoadCli();
        new CommandLine(cli).parseArgs(
                "--url", "http://127.0.0.1:" + port,
                "--clients", "24", "--rate", "120", "--duration", "PT6S", "--ramp-up", "PT1S", "--drain", "PT30S",
                "--pattern", "mixed", "--group-size", "6", "--payload", "40",
                "--reconnecting", "0.25", "--reconnect-every", "PT2S", "--never-ack", "0.1", "--slow-ack", "0.1",
                "--slow-ack-delay", "PT0.5S", "--outbox-drain", "PT2S", "--out", out.toString(), "--label", "smoke", "--quiet",
                "--transport", transport.name());

        LoadRun run = new LoadRun(cli.config(), System.err);
        Report report = run.execute();

        assertThat(report.lost()).as(report.markdown()).isZero();
        assertThat(report.accepted()).isGreaterThan(300);
        assertThat(report.reconnects()).as("reconnecting clients came back").isPositive();
        // every reconnect reads history since its cursor; whether it finds anything depends on timing
        // (a client that missed nothing reads an empty page), so the resyncs are counted, not their messages
        assertThat(run.stats.reconnectResyncs.sum()).as("reconnects resynced history").isPositive()
                .isLessThanOrEqualTo(report.reconnects());
        assertThat(report.deliveriesPerExpected()).isGreaterThan(0.5);
        assertThat(report.acceptLatencyMs().get("count")).isEqualTo((double) report.accepted());
        assertThat(Files.readString(out.resolve("report.json"))).contains("\"lost\" : 0");
        assertThat(Files.readString(out.resolve("report.md"))).contains("**0 lost**");
        assertThat(report.generatorWriteLagMs().get("count")).as("every send's first write is timed")
                .isGreaterThanOrEqualTo((double) report.accepted());
        List<String> timeline = Files.readAllLines(out.resolve("timeline.csv"));
        assertThat(timeline.getFirst()).startsWith("at,second,deliveries,");
        assertThat(timeline.stream().skip(1).mapToLong(l -> Long.parseLong(l.split(",")[2])).sum())
                .as("live deliveries placed in the timeline").isPositive();
    }

    @Test
    void editsDeletesAndReactionsInTheLoadAreReconciledAsMessagesAndTheirEffectsHold(@TempDir Path out) throws Exception {
        LoadCli cli = new LoadCli();
        new CommandLine(cli).parseArgs(
                "--url", "http://127.0.0.1:" + port,
                "--clients", "20", "--rate", "150", "--duration", "PT6S", "--ramp-up", "PT1S", "--drain", "PT30S",
                "--pattern", "mixed", "--group-size", "5", "--payload", "40", "--reconnecting", "0.2", "--reconnect-every", "PT2S",
                "--entry-mix", "0.3", "--delete-mix", "0.05", "--outbox-drain", "PT2S", "--out", out.toString(), "--label", "entries", "--quiet");

        LoadRun run = new LoadRun(cli.config(), System.err);
        Report report = run.execute();

        assertThat(report.lost()).as(report.markdown()).isZero();
        assertThat(report.entryMismatches()).as(report.markdown()).isZero();
        assertThat(report.entriesAccepted()).as("every kind made and accepted").containsKeys("text", "edit", "delete", "reaction");
        assertThat(report.entriesAccepted().values()).allSatisfy(n -> assertThat(n).isPositive());
        assertThat(report.acceptLatencyMs().get("count")).as("entries timed as messages").isEqualTo((double) report.accepted());
        assertThat(Files.readString(out.resolve("report.md"))).contains("accepted by kind");
    }

    @Test
    void theCommandLineDefaultsAreThePapersCampaign() {
        LoadCli cli = new LoadCli();
        new CommandLine(cli).parseArgs();
        LoadConfig c = cli.config();
        assertThat(List.of(c.clients(), (int) c.rate(), (int) c.duration().toSeconds())).containsExactly(600, 2000, 180);
        assertThat(c.pattern()).isEqualTo(LoadConfig.Pattern.pairwise);
    }
}
