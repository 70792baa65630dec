package dev.waterline.load.run;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

class TimelineUnitTests {

    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    @Test
    void aDeliveryCountsInTheSecondItsSendWasDueAndTheWorstSecondComesFirst(@TempDir Path dir) throws Exception {
        long start = System.nanoTime() - 5 * SECOND;   // "now" is the load's sixth second
        Timeline t = new Timeline(start, 10);

        t.delivered(start + 2 * SECOND + SECOND / 2);  // due in second 2, delivered ~2.5 s later
        t.delivered(start + 4 * SECOND + SECOND / 2);  // due in second 4, ~0.5 s later
        t.delivered(start + 4 * SECOND + SECOND / 2);
        t.delivered(start - SECOND);                   // before the load: not placed
        t.written(start + 3 * SECOND);

        List<Timeline.Second> seconds = t.seconds();
        assertThat(seconds).extracting(Timeline.Second::second).containsExactly(2, 3, 4);
        assertThat(seconds).extracting(Timeline.Second::deliveries).containsExactly(1L, 0L, 2L);
        assertThat(seconds.get(0).p99Ms()).isBetween(2_400.0, 60_000.0);
        assertThat(seconds.get(2).p99Ms()).isBetween(400.0, 2_400.0);
        assertThat(seconds.get(1).writeLagMaxMs()).isGreaterThanOrEqualTo(1_900.0);
        assertThat(t.worst(5)).extracting(Timeline.Second::second).containsExactly(2, 4);

        t.write(dir);
        List<String> csv = Files.readAllLines(dir.resolve("timeline.csv"));
        assertThat(csv).hasSize(4);
        assertThat(csv.get(0)).isEqualTo("at,second,deliveries,delivered_p50_ms,delivered_p99_ms,delivered_max_ms,"
                + "write_lag_p99_ms,write_lag_max_ms");
        String[] fourth = csv.get(3).split(",");
        assertThat(fourth).hasSize(8);
        assertThat(fourth[1]).isEqualTo("4");
        assertThat(fourth[2]).isEqualTo("2");
    }
}
