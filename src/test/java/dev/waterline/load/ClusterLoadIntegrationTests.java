package dev.waterline.load;

import java.nio.file.Path;

import dev.waterline.load.chat.LoadRun;
import dev.waterline.load.run.LoadCli;
import dev.waterline.load.run.Report;
import dev.waterline.support.Cluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;
import picocli.CommandLine;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The load generator over two nodes of one cluster (--urls): every pair of clients split across
 * the nodes, so every message crosses from one node to the other, reconciled with nothing lost.
 */
class ClusterLoadIntegrationTests {

    @Test
    void clientsSpreadOverTwoNodesReconcileWithNothingLost(@TempDir Path out) throws Exception {
        try (Cluster cluster = new Cluster("cluster_load", 24)) {
            ConfigurableApplicationContext one = cluster.start("load-one", "--waterline.api.requests-per-second=100000",
                    "--waterline.api.burst=100000");
            ConfigurableApplicationContext two = cluster.start("load-two", "--waterline.api.requests-per-second=100000",
                    "--waterline.api.burst=100000");
            LoadCli cli = new LoadCli();
            new CommandLine(cli).parseArgs(
                    "--urls", "http://127.0.0.1:" + Cluster.port(one) + ",http://127.0.0.1:" + Cluster.port(two),
                    "--clients", "20", "--rate", "100", "--duration", "PT6S", "--ramp-up", "PT1S", "--drain", "PT30S",
                    "--pattern", "pairwise", "--reconnecting", "0.2", "--reconnect-every", "PT2S",
                    "--outbox-drain", "PT10S", "--out", out.toString(), "--label", "cluster-smoke", "--quiet");

            Report report = new LoadRun(cli.config(), System.err).execute();

            assertThat(report.lost()).as(report.markdown()).isZero();
            assertThat(report.accepted()).isGreaterThan(300);
            assertThat(report.nodes()).isEqualTo(2);
            assertThat(report.failovers()).as("both nodes stayed up: every client stayed on its own").isZero();
            assertThat(report.deliveriesPerExpected()).as("live across nodes").isGreaterThan(0.9);
            assertThat(report.serverCounters()).as(report.markdown()).containsKey("waterline_deliveries_total");
        }
    }
}
