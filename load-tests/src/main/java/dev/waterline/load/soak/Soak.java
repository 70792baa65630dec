package dev.waterline.load.soak;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import dev.waterline.load.chat.LoadRun;
import dev.waterline.load.clients.SimClient;
import dev.waterline.load.deployment.Deployment;
import dev.waterline.load.deployment.ServerProcess;
import dev.waterline.load.run.LoadCli;
import dev.waterline.load.run.LoadConfig;
import dev.waterline.load.run.Report;
import dev.waterline.load.run.ServerMetrics;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.CombinedDomainXYPlot;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code waterline-load soak}: hours of the chat load on a deployment the run starts and owns
 * ({@link Deployment}, one node), with everything a long-lived server does running beside it:
 * clients that drop and reconnect, clients that never ack and clients that stop reading (so the
 * reapers withdraw them and reclaim goes on past them), an HTTP hook on a tenth of the chats, the retention
 * loops every minute with the outbox's backstop age short enough to fire within the run. The
 * server's heap, outbox depth, descriptors and threads are sampled all along into
 * {@code soak.csv}, plotted into {@code soak.png}, and judged flat or not in {@code soak.md};
 * then the load's own reconciliation (every message, every hook delivery).
 * <p>
 * Design note, flat: a series is flat when what it holds in the last quarter of the load is no
 * more than what it held from 3/8 to 5/8 of it by {@link Series#relative} and {@link Series#slack}
 * together. The baseline window starts past the warm-up (connections opening, pools and caches
 * filling, the first withdrawals) and past the wedged clients' stop at a third of the load
 * ({@link LoadRun}). The heap is judged twice: by its floor (the least used heap seen in the
 * window, the level a collection gets back to: a leak raises it, garbage between collections
 * does not) and by the old generation's size after the last collection (the median). The
 * descriptors, threads and outbox depth are judged by their medians. With 45 minutes between the
 * windows' middles at two hours, a heap that grows by more than about 30 MB an hour, or
 * descriptors by more than about 80, fails. A run whose samples stop short of 95 % of the load is
 * not judged flat.
 */
@Command(name = "soak", mixinStandardHelpOptions = true, sortOptions = false,
        description = "A long run with reconnects, reclaim, retention and hooks; heap, outbox depth and descriptors sampled, plotted and judged.")
public final class Soak implements Callable<Integer> {

    @Option(names = "--duration", defaultValue = "PT2H", description = "How long the load is offered. Default: ${DEFAULT-VALUE}")
    Duration duration;

    @Option(names = "--rate", defaultValue = "1500", description = "Sends per second. Default: ${DEFAULT-VALUE}")
    double rate;

    @Option(names = "--clients", defaultValue = "600", description = "Default: ${DEFAULT-VALUE}")
    int clients;

    @Option(names = "--hook-chats", defaultValue = "0.1", description = "The fraction of chats with an HTTP hook (two cores carry"
            + " a few hundred hook deliveries a second beside the chat load: docs/BENCHMARKS.md, Hooks). Default: ${DEFAULT-VALUE}")
    double hookChats;

    @Option(names = "--sample-every", defaultValue = "PT10S", description = "Default: ${DEFAULT-VALUE}")
    Duration sampleEvery;

    @Option(names = "--server-jar", defaultValue = ServerProcess.DEFAULT_JAR, converter = ServerProcess.JarConverter.class, description = "Default: ${DEFAULT-VALUE}")
    Path serverJar;

    @Option(names = "--out", description = "Folder for soak.csv, soak.png, soak.md and the load's report. Default: target/load-results/soak-<time>")
    Path out;

    @Option(names = "--load-arg", description = "An extra argument for the load generator, e.g. --load-arg=--server-jvm-opts=-Xmx1g (repeatable).")
    List<String> loadArgs = new ArrayList<>();

    @Option(names = "--plot", description = "Only plot and judge an existing soak.csv (into its folder); no load.")
    Path plotOnly;

    private final PrintStream err = System.err;

    /** The sampled columns, in the CSV's order after {@code minutes}. */
    static final List<String> COLUMNS = List.of("offering", "accepted", "connected", "heap_used_mb", "heap_live_after_gc_mb", "rss_mb",
            "outbox_depth", "outbox_oldest_age_s", "descriptors", "threads", "withdrawals", "reclaimed_backstop", "hook_deliveries");

    /** How each judged series may grow from the second quarter to the last and still be flat. */
    record Series(String column, boolean floor, double relative, double slack, String unit) {
    }

    static final List<Series> JUDGED = List.of(
            new Series("heap_used_mb", true, 1.10, 16, "MB"),
            new Series("heap_live_after_gc_mb", false, 1.10, 16, "MB"),
            new Series("descriptors", false, 1.05, 20, ""),
            new Series("threads", false, 1.10, 10, ""),
            new Series("outbox_depth", false, 1.50, 2000, "rows"));

    @Override
    public Integer call() throws Exception {
        if (plotOnly != null) {
            List<double[]> rows = read(plotOnly);
            Path dir = plotOnly.toAbsolutePath().getParent();
            plot(rows, dir.resolve("soak.png"));
            Verdict v = judge(rows, duration.toSeconds() / 60.0, 0);
            Files.writeString(dir.resolve("soak.md"), v.markdown());
            System.out.println(v.markdown());
            return v.flat() ? 0 : 2;
        }
        Path dir = out != null ? out
                : Path.of("target", "load-results", "soak-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        Files.createDirectories(dir);
        List<String> args = new ArrayList<>(List.of("--clients", Integer.toString(clients), "--rate", Double.toString(rate),
                "--duration", duration.toString(), "--server-jar", serverJar.toString(), "--quiet",
                "--drain", "PT300S", "--outbox-drain", "PT300S", "--out", dir.toString(), "--label", "soak " + duration,
                "--reconnecting", "0.1", "--reconnect-every", "PT60S", "--never-ack", "0.02", "--stop-reading", "0.02",
                "--hook-kind", "http", "--hook-chats", Double.toString(hookChats), "--hook-drain", "PT15M",
                // the retention loops run every minute; the outbox's backstop age is short enough to fire within the run,
                // history's is kept long (history younger than it is what the reconciliation reads back)
                "--server-arg=--waterline.retention.purge-interval=1m", "--server-arg=--waterline.retention.outbox=20m"));
        args.addAll(loadArgs);
        LoadConfig cfg = LoadCli.configOf(args);
        ServerProcess.Launch launch = new ServerProcess.Launch(cfg.serverJar(), cfg.serverJvmOpts(), cfg.serverArgs(), 1);
        Path csv = dir.resolve("soak.csv");
        try (Deployment d = new Deployment(new Deployment.Options(1, false, false, false, false, 0), dir.resolve("deployment"), launch)) {
            d.start();
            LoadRun run = new LoadRun(cfg, err, d, List.of());
            Sampler sampler = new Sampler(run, d, csv, sampleEvery);
            Thread sampling = Thread.ofPlatform().daemon().name("soak-sampler").start(sampler);
            Report report;
            try {
                report = run.execute();
            }
            finally {
                sampling.interrupt();
                sampling.join();
            }
            List<double[]> rows = read(csv);
            plot(rows, dir.resolve("soak.png"));
            Verdict v = judge(rows, duration.toSeconds() / 60.0, sampler.failures);
            String md = v.markdown() + "\n" + report.markdown() + run.hookMarkdown;
            Files.writeString(dir.resolve("soak.md"), md);
            System.out.println(md);
            System.out.println("Reports in " + dir.toAbsolutePath());
            if (sampler.failures > 0) {
                err.println("waterline-load soak: " + sampler.failures + " samples could not read the server's metrics (" + sampler.lastFailure + ")");
            }
            return report.clean() && run.hookLost == 0 && v.flat() ? 0 : 2;
        }
    }

    /** Every {@code every}: the server's series (Prometheus text, /proc) and the generator's, one CSV row, flushed at once. */
    static final class Sampler implements Runnable {
        private final LoadRun run;
        private final Deployment deployment;
        private final Path csv;
        private final Duration every;
        private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        volatile long failures;
        volatile String lastFailure = "";

        Sampler(LoadRun run, Deployment deployment, Path csv, Duration every) {
            this.run = run;
            this.deployment = deployment;
            this.csv = csv;
            this.every = every;
        }

        /** Rows taken before the load's start was known: written with negative minutes once it is. */
        private final List<long[]> earlyAt = new ArrayList<>();
        private final List<double[]> early = new ArrayList<>();

        @Override
        public void run() {
            try {
                Files.writeString(csv, "minutes," + String.join(",", COLUMNS) + "\n");
            }
            catch (IOException e) {
                failures++;
                lastFailure = "soak.csv: " + e;
                return;
            }
            while (!Thread.currentThread().isInterrupted()) {
                try {
                    sampleOnce();
                }
                catch (IOException | RuntimeException e) {
                    // one pass lost, counted and reported at the end; the next pass tries again
                    failures++;
                    lastFailure = e.toString();
                }
                try {
                    TimeUnit.NANOSECONDS.sleep(every.toNanos());
                }
                catch (InterruptedException e) {
                    break;
                }
            }
            try {
                flushEarly(System.nanoTime());
            }
            catch (IOException e) {
                failures++;
                lastFailure = "soak.csv: " + e;
            }
        }

        private void sampleOnce() throws IOException {
            Map<String, Double> m = scrape();
            if (Thread.currentThread().isInterrupted()) {
                return;   // stopped while reading the server: a file write now would fail, and the run is over
            }
            long now = System.nanoTime();
            long start = run.offerStartNanos;
            double[] row = {
                    0,
                    start != 0 && run.offering() ? 1 : 0,
                    run.stats.accepted.sum(),
                    connected(),
                    mb(m.get("heap")),
                    mb(m.get("jvm_gc_live_data_size_bytes")),
                    mb(m.get("waterline_process_resident_memory_bytes")),
                    m.getOrDefault("waterline_outbox_depth", -1.0),
                    m.getOrDefault("waterline_outbox_oldest_age_seconds", -1.0),
                    descriptors(deployment.nodePid(0)),
                    m.getOrDefault("jvm_threads_live_threads", -1.0),
                    m.getOrDefault("waterline_reaper_withdrawals_total", -1.0),
                    m.getOrDefault("waterline_outbox_reclaimed_backstop_total", -1.0),
                    m.getOrDefault("waterline_hook_deliveries_total", -1.0)};
            if (start == 0) {
                earlyAt.add(new long[] {now});
                early.add(row);
                return;
            }
            flushEarly(start);
            row[0] = (now - start) / 60e9;
            append(row);
        }

        /** The rows taken before the load started, their minutes counted back from {@code start}. */
        private void flushEarly(long start) throws IOException {
            for (int i = 0; i < early.size(); i++) {
                double[] r = early.get(i);
                r[0] = Math.min(0, (earlyAt.get(i)[0] - start) / 60e9);
                append(r);
            }
            early.clear();
            earlyAt.clear();
        }

        private void append(double[] row) throws IOException {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < row.length; i++) {
                b.append(i == 0 ? "" : ",").append(String.format(Locale.ROOT, i == 0 ? "%.3f" : "%.1f", row[i]));
            }
            Files.writeString(csv, b.append('\n'), java.nio.file.StandardOpenOption.APPEND);
        }

        /** Clients connected now; -1 while the set-up is still adding them. */
        private double connected() {
            try {
                return run.clients().stream().filter(SimClient::connected).count();
            }
            catch (java.util.ConcurrentModificationException e) {
                return -1;
            }
        }

        private static double mb(Double bytes) {
            return bytes == null || bytes.isNaN() ? -1 : bytes / (1 << 20);
        }

        /** Open descriptors of the process: the entries of /proc/&lt;pid&gt;/fd (-1 where it cannot be read). */
        static double descriptors(long pid) {
            try (Stream<Path> fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
                return fds.count();
            }
            catch (IOException e) {
                return -1;
            }
        }

        /** The server's series summed over their labels; the heap's areas kept apart. Empty when the node did not answer. */
        private Map<String, Double> scrape() {
            Map<String, Double> sums = new java.util.HashMap<>();
            try {
                URI uri = URI.create(deployment.nodeBases().getFirst() + "/actuator/prometheus");
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() != 200) {
                    failures++;
                    lastFailure = "HTTP " + r.statusCode();
                    return sums;
                }
                sums.putAll(ServerMetrics.parse(r.body()));
            }
            catch (IOException | RuntimeException e) {
                failures++;
                lastFailure = e.toString();
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return sums;
        }
    }

    /** The CSV's rows; none when the file is missing or holds no more than its header. */
    static List<double[]> read(Path csv) throws IOException {
        if (!Files.exists(csv)) {
            return List.of();
        }
        List<String> lines = Files.readAllLines(csv);
        List<double[]> rows = new ArrayList<>();
        for (String l : lines.subList(Math.min(1, lines.size()), lines.size())) {
            if (l.isBlank()) {
                continue;
            }
            String[] f = l.split(",");
            double[] row = new double[f.length];
            for (int i = 0; i < f.length; i++) {
                row[i] = Double.parseDouble(f[i]);
            }
            rows.add(row);
        }
        return rows;
    }

    private static int col(String name) {
        return COLUMNS.indexOf(name) + 1;
    }

    /** One judged series: its level in the baseline window and in the last, and whether that is flat. */
    record Judged(Series series, double baseline, double last, boolean flat) {
    }

    /**
     * The verdict: minutes sampled under load against those expected (0: not checked), the
     * sampler's failed passes, and each judged series. Flat only when every series is and the
     * samples reach to 95 % of the expected minutes.
     */
    record Verdict(double minutes, double expectedMinutes, long failures, List<Judged> judged) {
        boolean covered() {
            return expectedMinutes <= 0 || minutes >= 0.95 * expectedMinutes;
        }

        boolean flat() {
            return covered() && !judged.isEmpty() && judged.stream().allMatch(Judged::flat);
        }

        String markdown() {
            StringBuilder b = new StringBuilder(String.format(Locale.ROOT,
                    "Soak: %.1f minutes sampled under load%s; %d sampling passes failed. The window from 3/8 to 5/8 of the load"
                            + " against its last quarter (flat: last ≤ baseline × relative + slack):%n%n",
                    minutes, expectedMinutes > 0 ? String.format(Locale.ROOT, " of %.0f%s", expectedMinutes,
                            covered() ? "" : " (too few: NOT judged flat)") : "", failures));
            b.append("| series | level | baseline window | last quarter | allowed | flat |\n|---|---|---|---|---|---|\n");
            for (Judged j : judged) {
                b.append(String.format(Locale.ROOT, "| %s | %s | %.1f %s | %.1f %s | ≤ %.1f | %s |%n", j.series().column(),
                        j.series().floor() ? "floor (least seen)" : "median", j.baseline(), j.series().unit(), j.last(), j.series().unit(),
                        j.baseline() * j.series().relative() + j.series().slack(), j.flat() ? "yes" : "NO"));
            }
            return b.toString();
        }
    }

    /** The flat verdict of the class note over the rows taken while the load was offered. */
    static Verdict judge(List<double[]> rows, double expectedMinutes, long failures) {
        int offering = col("offering");
        List<double[]> during = rows.stream().filter(r -> offering < r.length && r[offering] == 1).toList();
        if (during.size() < 8) {
            return new Verdict(during.isEmpty() ? 0 : during.getLast()[0], expectedMinutes, failures, List.of());
        }
        double end = during.getLast()[0];
        List<Judged> out = new ArrayList<>();
        for (Series s : JUDGED) {
            int c = col(s.column());
            double baseline = level(during, c, end * 3 / 8, end * 5 / 8, s.floor());
            double last = level(during, c, end * 3 / 4, end + 1e-9, s.floor());
            boolean seen = baseline >= 0 && last >= 0;
            out.add(new Judged(s, baseline, last, seen && last <= baseline * s.relative() + s.slack()));
        }
        return new Verdict(end, expectedMinutes, failures, out);
    }

    /** The least value (floor) or the median of a column's values from {@code from} (inclusive) to {@code to}; -1 when none. */
    private static double level(List<double[]> rows, int c, double from, double to, boolean floor) {
        List<Double> xs = rows.stream().filter(r -> r[0] >= from && r[0] < to && c < r.length && r[c] >= 0)
                .map(r -> r[c]).sorted().toList();
        if (xs.isEmpty()) {
            return -1;
        }
        if (floor) {
            return xs.getFirst();
        }
        int n = xs.size();
        return n % 2 == 1 ? xs.get(n / 2) : (xs.get(n / 2 - 1) + xs.get(n / 2)) / 2;
    }

    /**
     * The rows from the load's start on, and those before it where their minutes are negative (a
     * file written before the sampler counted them back from the start has them from 0 instead).
     */
    private static List<double[]> fromTheLoad(List<double[]> rows) {
        int offering = col("offering");
        int first = 0;
        while (first < rows.size() && rows.get(first)[offering] == 0) {
            first++;
        }
        List<double[]> out = new ArrayList<>();
        for (int i = 0; i < rows.size(); i++) {
            if (i >= first || rows.get(i)[0] < 0) {
                out.add(rows.get(i));
            }
        }
        return out;
    }

    /** Heap (used and live after collection), outbox depth, descriptors and threads over the minutes of the load: one PNG. */
    static void plot(List<double[]> rows, Path png) throws IOException {
        System.setProperty("java.awt.headless", "true");
        NumberAxis minutes = new NumberAxis("minutes from the start of the load (after it: the drains and the reconciliation)");
        CombinedDomainXYPlot plot = new CombinedDomainXYPlot(minutes);
        Map<String, List<String>> panels = new LinkedHashMap<>();
        panels.put("heap MB", List.of("heap_used_mb", "heap_live_after_gc_mb"));
        panels.put("outbox rows", List.of("outbox_depth"));
        panels.put("descriptors, threads", List.of("descriptors", "threads"));
        panels.put("clients connected", List.of("connected"));
        for (var p : panels.entrySet()) {
            XYSeriesCollection data = new XYSeriesCollection();
            for (String name : p.getValue()) {
                XYSeries s = new XYSeries(name, true, true);
                int c = col(name);
                for (double[] r : fromTheLoad(rows)) {
                    if (c < r.length && r[c] >= 0) {
                        s.add(r[0], r[c]);
                    }
                }
                data.addSeries(s);
            }
            NumberAxis y = new NumberAxis(p.getKey());
            y.setAutoRangeIncludesZero(true);
            plot.add(new XYPlot(data, null, y, new XYLineAndShapeRenderer(true, false)), 1);
        }
        JFreeChart chart = new JFreeChart("Waterline soak: the server over the load", JFreeChart.DEFAULT_TITLE_FONT, plot, true);
        ChartUtils.saveChartAsPNG(png.toFile(), chart, 1100, 1000);
    }
}
