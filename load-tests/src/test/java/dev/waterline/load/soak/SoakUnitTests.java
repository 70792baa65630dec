package dev.waterline.load.soak;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.waterline.load.chat.LoadRun;
import dev.waterline.load.run.ServerMetrics;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

class SoakUnitTests {

    /** A row of the CSV at {@code minute}: heap used, descriptors, threads and outbox depth as given, the rest plausible. */
    private static double[] row(double minute, double heap, double fds, double threads, double depth) {
        double[] r = new double[Soak.COLUMNS.size() + 1];
        r[0] = minute;
        java.util.Arrays.fill(r, 1, r.length, 1);
        r[Soak.COLUMNS.indexOf("heap_used_mb") + 1] = heap;
        r[Soak.COLUMNS.indexOf("descriptors") + 1] = fds;
        r[Soak.COLUMNS.indexOf("threads") + 1] = threads;
        r[Soak.COLUMNS.indexOf("outbox_depth") + 1] = depth;
        return r;
    }

    @Test
    void aSawtoothHeapWithAFlatFloorIsFlat() {
        List<double[]> rows = new ArrayList<>();
        for (int m = 0; m < 120; m++) {
            rows.add(row(m, 150 + (m % 5) * 60, 700, 90, 1500 + (m % 3) * 100));
        }
        Soak.Verdict v = Soak.judge(rows, 0, 0);
        assertThat(v.flat()).as(v.markdown()).isTrue();
        assertThat(v.judged()).hasSize(Soak.JUDGED.size());
    }

    @Test
    void aRisingHeapFloorIsNotFlat() {
        List<double[]> rows = new ArrayList<>();
        for (int m = 0; m < 120; m++) {
            rows.add(row(m, 150 + m * 3 + (m % 5) * 60, 700, 90, 1500));
        }
        Soak.Verdict v = Soak.judge(rows, 0, 0);
        assertThat(v.flat()).isFalse();
        assertThat(v.judged().stream().filter(j -> !j.flat()).map(j -> j.series().column())).containsExactly("heap_used_mb");
    }

    @Test
    void leakingDescriptorsAreNotFlat() {
        List<double[]> rows = new ArrayList<>();
        for (int m = 0; m < 120; m++) {
            rows.add(row(m, 200, 700 + m * 2, 90, 1500));
        }
        Soak.Verdict v = Soak.judge(rows, 0, 0);
        assertThat(v.judged().stream().filter(j -> !j.flat()).map(j -> j.series().column())).containsExactly("descriptors");
    }

    @Test
    void aTenthOfTheChatsGetAHookEveryTenthOne() {
        List<Integer> hooked = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            if (LoadRun.hookedChat(i, 0.1)) {
                hooked.add(i);
            }
        }
        assertThat(hooked).hasSize(30).startsWith(9, 19, 29);
        assertThat(LoadRun.hookedChat(0, 1)).isTrue();
        assertThat(LoadRun.hookedChat(5, 0)).isFalse();
    }

    @Test
    void samplesOutsideTheOfferedLoadAreNotJudged() {
        List<double[]> rows = new ArrayList<>();
        for (int m = 0; m < 120; m++) {
            rows.add(row(m, 200, 700, 90, 1500));
        }
        // after the load: the drain and the final resync, descriptors and heap elsewhere
        for (int m = 120; m < 200; m++) {
            double[] r = row(m, 2000, 5000, 900, 0);
            r[Soak.COLUMNS.indexOf("offering") + 1] = 0;
            rows.add(r);
        }
        Soak.Verdict v = Soak.judge(rows, 0, 0);
        assertThat(v.flat()).as(v.markdown()).isTrue();
        assertThat(v.minutes()).isEqualTo(119);
    }

    @Test
    void samplesThatStopShortOfTheLoadAreNotJudgedFlat() {
        List<double[]> rows = new ArrayList<>();
        for (int m = 0; m < 60; m++) {
            rows.add(row(m, 200, 700, 90, 1500));
        }
        assertThat(Soak.judge(rows, 60, 0).flat()).isTrue();
        Soak.Verdict v = Soak.judge(rows, 120, 3);
        assertThat(v.flat()).as(v.markdown()).isFalse();
        assertThat(v.markdown()).contains("NOT judged flat").contains("3 sampling passes failed");
    }

    @Test
    void aMissingCsvHasNoRows(@TempDir Path dir) throws Exception {
        assertThat(Soak.read(dir.resolve("none.csv"))).isEmpty();
        Path header = dir.resolve("header.csv");
        Files.writeString(header, "minutes,offering\n");
        assertThat(Soak.read(header)).isEmpty();
    }

    @Test
    void tooFewSamplesAreNoVerdictOfFlat() {
        Soak.Verdict v = Soak.judge(List.of(row(0, 1, 1, 1, 1), row(1, 1, 1, 1, 1)), 0, 0);
        assertThat(v.flat()).isFalse();
    }

    @Test
    void prometheusTextIsSummedByNameWithTheHeapApart() {
        Map<String, Double> m = ServerMetrics.parse("""
                # HELP jvm_memory_used_bytes x
                jvm_memory_used_bytes{area="heap",id="G1 Eden Space"} 100.0
                jvm_memory_used_bytes{area="heap",id="G1 Old Gen"} 50.0
                jvm_memory_used_bytes{area="nonheap",id="Metaspace"} 999.0
                waterline_outbox_depth 42.0
                jvm_threads_live_threads 17.0
                """);
        assertThat(m).containsEntry("heap", 150.0).containsEntry("waterline_outbox_depth", 42.0)
                .containsEntry("jvm_threads_live_threads", 17.0).containsEntry("jvm_memory_used_bytes", 999.0);
    }

    @Test
    void theCsvIsReadBackAndPlottedIntoAPng(@TempDir Path dir) throws Exception {
        StringBuilder b = new StringBuilder("minutes," + String.join(",", Soak.COLUMNS) + "\n");
        for (int m = 0; m < 30; m++) {
            double[] r = row(m, 200 + m % 4, 700, 90, 1200);
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < r.length; i++) {
                line.append(i == 0 ? "" : ",").append(r[i]);
            }
            b.append(line).append('\n');
        }
        Path csv = dir.resolve("soak.csv");
        Files.writeString(csv, b);
        List<double[]> rows = Soak.read(csv);
        assertThat(rows).hasSize(30);
        Path png = dir.resolve("soak.png");
        Soak.plot(rows, png);
        byte[] head = java.util.Arrays.copyOf(Files.readAllBytes(png), 8);
        assertThat(head).startsWith((byte) 0x89, (byte) 'P', (byte) 'N', (byte) 'G');
    }
}
