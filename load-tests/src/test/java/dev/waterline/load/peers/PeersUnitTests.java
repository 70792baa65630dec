package dev.waterline.load.peers;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import dev.waterline.load.run.CpuMeter;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

class PeersUnitTests {

    private static Peers.Row row(String system, String kind, long steady, double p99, Map<String, Double> cpu, long lost) {
        return new Peers.Row(1, system, system, "d", 600, kind, 1000, 10, 0, steady, 1, p99, cpu, lost, 0, "", "");
    }

    @Test
    void aWaterlineServerGetsTheLikeForLikeSettingsUnlessTheCommandLineGivesItsOwn() {
        Peers peers = new Peers();
        picocli.CommandLine cli = new picocli.CommandLine(peers);
        cli.parseArgs("--window", "64", "--prefetch", "100", "--server-arg=--waterline.reapers.max-pending=20",
                "--server-arg=--spring.threads.virtual.enabled=false");
        java.util.List<String> args = peers.serverArgsFor(600, false);
        assertThat(args).contains("--waterline.reapers.max-pending=20", "--spring.threads.virtual.enabled=false",
                "--waterline.inbound.queue-size=76800", "--waterline.gateway.max-sends-per-second=1000000");
        assertThat(args).filteredOn(a -> a.startsWith("--waterline.reapers.max-pending=")).hasSize(1);
        assertThat(args).noneMatch(a -> a.contains("synchronous_commit"));
        assertThat(peers.serverArgsFor(10, true)).contains("--waterline.inbound.queue-size=8000", "--waterline.reapers.max-pending=20")
                .anyMatch(a -> a.contains("synchronous_commit', 'off'"));
    }

    @Test
    void theMedianOfAnEvenCountIsTheMeanOfTheMiddleTwo() {
        List<Peers.Row> rows = List.of(row("a", "saturation", 10, 0, Map.of(), 0), row("a", "saturation", 40, 0, Map.of(), 0),
                row("a", "saturation", 20, 0, Map.of(), 0), row("a", "saturation", 30, 0, Map.of(), 0));
        assertThat(Peers.median(rows, Peers.Row::steadyPerSecond)).isEqualTo(25);
        assertThat(Peers.median(rows.subList(0, 3), Peers.Row::steadyPerSecond)).isEqualTo(20);
        assertThat(Peers.median(List.of(), Peers.Row::steadyPerSecond)).isNaN();
    }

    @Test
    void cpuSecondsBecomeMicrosecondsPerMessage() {
        assertThat(Peers.perMessage(Map.of("server", 2.0), 50_000)).containsEntry("server", 40.0);
        assertThat(Peers.perMessage(Map.of("server", 2.0), 0)).as("no message, no figure").isEmpty();
        assertThat(Peers.perMessage(Map.of("server", 2.0, "postgres", Double.NaN), 100)).as("a part the meter could not tell").isEmpty();
    }

    @Test
    void theTableSumsTheSystemsPartsAndKeepsTheGeneratorApart() {
        Map<String, Double> cpu = Map.of("server", 40.0, "postgres", 30.0, "redis", 10.0, "generator", 25.0);
        String md = Peers.markdown(List.of(row("waterline", "saturation", 9000, 0, cpu, 0), row("waterline", "fixed", 2000, 12.5, Map.of(), 0)));
        assertThat(md).contains("| 600 | waterline | d | 9000 (9000) | 1.0 / 12.5 | 80.0 | 30.0 / 10.0 | 25.0 | 0 |");
    }

    @Test
    void aRunWithoutFiguresIsLeftOutOfTheMediansAndABrokerHasNoDatabaseColumns() {
        Map<String, Double> broker = Map.of("system", 60.0, "generator", 30.0);
        String md = Peers.markdown(List.of(row("rabbit", "saturation", 9000, 0, broker, 0), row("rabbit", "saturation", 7000, 0, Map.of(), 0)));
        assertThat(md).as("the second run's CPU is missing, not 0").contains("| 8000 (9000, 7000) | – / – | 60.0 | – / – | 30.0 |");
    }

    @Test
    void aSkippedSystemShowsWhyInsteadOfFigures() {
        Peers.Row skipped = new Peers.Row(1, "rabbitmq-quorum", "q", "d", 600, "saturation", 1000, 0, 0, 0, 0, 0, Map.of(), 0, 0, "",
                "skipped: too many queues");
        assertThat(Peers.markdown(List.of(skipped))).contains("| 600 | q | d | skipped: too many queues |");
    }

    @Test
    void theMeterCountsThisProcessAndItsOwnWork() {
        assumeThat(Path.of("/proc/self/stat")).as("Linux /proc").exists();
        CpuMeter meter = new CpuMeter(List.of(CpuMeter.pid("me", ProcessHandle.current().pid())));
        CpuMeter.Sample before = meter.sample();
        // spin until this thread itself has used 0.3 s of CPU, however busy the machine is
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        long until = threads.getCurrentThreadCpuTime() + 300_000_000L;
        long x = 0;
        while (threads.getCurrentThreadCpuTime() < until) {
            x += Long.numberOfTrailingZeros(x + System.nanoTime());
        }
        CpuMeter.Sample after = meter.sample();
        assertThat(x).isPositive();
        assertThat(after.secondsSince(before).get("me")).as("0.3 s of this thread's CPU (ticks of 10 ms)").isGreaterThanOrEqualTo(0.28);
    }

    @Test
    void aPartWhoseProcessEndedInsideTheWindowHasNoFigure() throws Exception {
        assumeThat(Path.of("/proc/self/stat")).as("Linux /proc").exists();
        Process child = new ProcessBuilder("sleep", "30").start();
        try {
            CpuMeter meter = new CpuMeter(List.of(CpuMeter.pid("child", child.pid()),
                    CpuMeter.pid("me", ProcessHandle.current().pid())));
            CpuMeter.Sample before = meter.sample();
            child.destroyForcibly().waitFor();
            CpuMeter.Sample after = meter.sample();
            // reaped by this JVM, the child's time would have landed in "me"
            assertThat(after.secondsSince(before).get("me")).isNaN();
            assertThat(after.secondsSince(before).get("child")).isNaN();
        }
        finally {
            child.destroyForcibly();
        }
    }
}
