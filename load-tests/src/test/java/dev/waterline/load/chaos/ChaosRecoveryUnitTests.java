package dev.waterline.load.chaos;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The chaos table's time to recover, from the harness's own samples (Chaos, "Design note, recovery"). */
class ChaosRecoveryUnitTests {

    private static final long S = 1_000_000_000L;

    /** Samples every 250 ms for {@code seconds}: accepted at {@code rate} except where {@code down} says none. */
    private static List<Chaos.Sampler.Sample> samples(int seconds, double rate, java.util.function.LongPredicate down,
                                                      java.util.function.LongPredicate refusing) {
        List<Chaos.Sampler.Sample> out = new ArrayList<>();
        long accepted = 0;
        long refused = 0;
        for (long t = 0; t <= seconds * S; t += S / 4) {
            if (!down.test(t)) {
                accepted += (long) (rate / 4);
            }
            if (refusing.test(t)) {
                refused++;
            }
            out.add(new Chaos.Sampler.Sample(t, accepted, Map.of("refused unavailable", refused)));
        }
        return out;
    }

    @Test
    void anOutageRecoversAtTheEndOfItsLastShortSecondCountedFromTheFaultsStartAndEnd() {
        // down from 20 s to 30 s, refusing meanwhile; the fault ends (healed) at 28 s
        var all = samples(60, 500, t -> t >= 20 * S && t < 30 * S, t -> t >= 20 * S && t < 30 * S);
        Chaos.Recovery r = Chaos.Sampler.recover(all, 20 * S, 28 * S, 60 * S, 500);
        assertThat(r.sinceInject()).isBetween(10.0, 11.0);
        assertThat(r.seconds()).isBetween(2.0, 3.0);
        assertThat(r.answers()).contains("refused unavailable");
    }

    @Test
    void aServiceThatNeverFalteredRecoveredAtOnce() {
        var all = samples(60, 500, t -> false, t -> false);
        Chaos.Recovery r = Chaos.Sampler.recover(all, 20 * S, 50 * S, 60 * S, 500);
        assertThat(r.sinceInject()).isZero();
        assertThat(r.seconds()).isZero();
        assertThat(r.answers()).isEqualTo("nothing but accepted");
    }

    @Test
    void aServiceStillShortWhenTheLoadEndsHasNotRecovered() {
        var all = samples(60, 500, t -> t >= 20 * S, t -> false);
        Chaos.Recovery r = Chaos.Sampler.recover(all, 20 * S, 25 * S, 60 * S, 500);
        assertThat(r.seconds()).isEqualTo(-1);
        assertThat(r.sinceInject()).isEqualTo(-1);
    }

    @Test
    void noSamplesAfterTheFaultIsNotARecovery() {
        var all = samples(20, 500, t -> false, t -> false);
        Chaos.Recovery r = Chaos.Sampler.recover(all, 30 * S, 35 * S, 60 * S, 500);
        assertThat(r.seconds()).isEqualTo(-1);
    }

    @Test
    void aRecoveryBeforeTheFaultEndedCountsZeroAfterItsEnd() {
        // clients failed over within 3 s; the killed node was restarted (the fault's end) at 45 s
        var all = samples(60, 500, t -> t >= 20 * S && t < 23 * S, t -> false);
        Chaos.Recovery r = Chaos.Sampler.recover(all, 20 * S, 45 * S, 60 * S, 500);
        assertThat(r.sinceInject()).isBetween(3.0, 4.0);
        assertThat(r.seconds()).isZero();
    }

    @Test
    void theMedianOfAnEvenNumberOfRunsIsTheMeanOfTheMiddleTwo() {
        assertThat(Chaos.median(java.util.List.of(3.0, 1.0, 2.0))).isEqualTo(2.0);
        assertThat(Chaos.median(java.util.List.of(4.0, 1.0, 2.0, 3.0))).isEqualTo(2.5);
        assertThat(Chaos.median(java.util.List.of())).isZero();
    }

    @Test
    void aDeploymentBelowTheOfferedRateBeforeTheFaultIsJudgedAgainstWhatItKept() {
        // offered 500/s, kept 400/s before the fault (saturated), down from 20 s to 25 s, 400/s again after
        var all = samples(60, 400, t -> t >= 20 * S && t < 25 * S, t -> false);
        double before = Chaos.Sampler.baseline(all, 10 * S, 20 * S);
        assertThat(before).isBetween(390.0, 410.0);
        Chaos.Recovery r = Chaos.Sampler.recover(all, 20 * S, 20 * S, 60 * S, Math.min(500, before));
        assertThat(r.sinceInject()).isBetween(5.0, 6.0);
        assertThat(Chaos.Sampler.recover(all, 20 * S, 20 * S, 60 * S, 600).seconds())
                .as("against a rate it never kept (400 is two thirds of 600) it never recovers").isEqualTo(-1);
    }

    @Test
    void noBaselineFromAWindowShorterThanThreeSeconds() {
        var all = samples(60, 400, t -> false, t -> false);
        assertThat(Chaos.Sampler.baseline(all, 10 * S, 12 * S)).isEqualTo(-1);
    }

    /**
     * Samples every 250 ms: {@code rate} in even seconds and {@code rate * low} in odd ones, none
     * where {@code down} says (of the quarter second ending at the sample).
     */
    private static List<Chaos.Sampler.Sample> jittery(int seconds, double rate, double low, java.util.function.LongPredicate down) {
        List<Chaos.Sampler.Sample> out = new ArrayList<>();
        long accepted = 0;
        for (long t = 0; t <= seconds * S; t += S / 4) {
            if (!down.test(t)) {
                accepted += (long) ((t / S) % 2 == 0 ? rate / 4 : rate * low / 4);
            }
            out.add(new Chaos.Sampler.Sample(t, accepted, Map.of()));
        }
        return out;
    }

    @Test
    void aDeploymentThatSwingsFromSecondToSecondIsNotShortWhileOneGoodNeighbourEvensTheDipOut() {
        // every other second at half the rate, before and after an outage from 20 s to 24 s
        var all = jittery(60, 2000, 0.5, t -> t > 20 * S && t <= 24 * S);
        double before = Chaos.Sampler.baseline(all, 10 * S, 20 * S);
        assertThat(before).isBetween(1400.0, 1600.0);
        Chaos.Recovery r = Chaos.Sampler.recover(all, 20 * S, 20 * S, 60 * S, Math.min(2000, before));
        assertThat(r.sinceInject()).as("back once the outage is over").isBetween(4.0, 5.5);
    }

    @Test
    void aDipThatLastsSecondsStillFallsShort() {
        // the same swing, then from 40 s to 43 s at 20 % of the rate
        var all = jittery(60, 2000, 0.5, t -> false);
        var slow = new ArrayList<Chaos.Sampler.Sample>();
        long removed = 0;
        long last = 0;
        for (Chaos.Sampler.Sample x : all) {
            long added = x.accepted() - last;
            last = x.accepted();
            if (x.nanos() > 40 * S && x.nanos() <= 43 * S) {
                removed += added - (long) (2000 * 0.2 / 4);
            }
            slow.add(new Chaos.Sampler.Sample(x.nanos(), x.accepted() - removed, Map.of()));
        }
        Chaos.Recovery r = Chaos.Sampler.recover(slow, 20 * S, 20 * S, 60 * S, Chaos.Sampler.baseline(slow, 10 * S, 20 * S));
        assertThat(r.sinceInject()).isBetween(22.5, 23.5);
    }

    @Test
    void aRunMeasuredEarlierIsJudgedAgainFromItsSamplesStepsAndReport(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        java.nio.file.Path run = java.nio.file.Files.createDirectories(dir.resolve("redis-flush-1"));
        StringBuilder csv = new StringBuilder("seconds,accepted,refused overloaded\n");
        long accepted = 0;
        long refused = 0;
        for (int q = 0; q <= 240; q++) {
            double t = q / 4.0;
            if (t <= 20 || t > 26) {
                accepted += 500;
            }
            if (t > 20 && t <= 22) {
                refused += 3;   // counters, as the harness samples them
            }
            csv.append(String.format(java.util.Locale.ROOT, "%.2f,%d,%d%n", t, accepted, refused));
        }
        java.nio.file.Files.writeString(run.resolve("samples.csv"), csv);
        java.nio.file.Files.writeString(run.resolve("steps.csv"), "step,role,began,ended\nFLUSHALL,INJECT,20.000,20.010\n");
        java.nio.file.Files.writeString(run.resolve("report.json"),
                "{\"configuration\":{\"rate\":2000.0,\"duration\":\"PT1M\",\"rampUp\":\"PT10S\"}}");
        Chaos.Recovery r = Chaos.Rejudge.judge(run);
        assertThat(r.sinceInject()).isBetween(6.0, 7.0);
        assertThat(r.answers()).contains("refused overloaded");
        assertThat(Chaos.Rejudge.table(dir)).contains("| redis-flush | 1 |");
    }

    @Test
    void aFaultThatOutlastsTheLoadHasNothingToRecoverFrom() {
        // a node killed at 20 s whose restart, under the load, was ready only at 70 s
        var all = samples(60, 500, t -> t >= 20 * S, t -> false);
        Chaos.Recovery r = Chaos.Sampler.recover(all, 20 * S, 70 * S, 60 * S, 500);
        assertThat(r.seconds()).isEqualTo(Chaos.OUTLASTED);
        assertThat(r.sinceInject()).isEqualTo(Chaos.OUTLASTED);
    }
}
