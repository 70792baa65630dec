package dev.waterline.load;

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

import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.CombinedDomainXYPlot;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code waterline-load soak}: hours of the chat load on a deployment the run starts and owns
 * ({@link Deployment}, one node), with everything a long-lived server does running beside it:
 * clients that drop and reconnect, clients that never ack and clients that stop reading (so the
 * reapers withdraw them and reclaim goes on past them), an HTTP hook on every chat, the retention
 * loops every minute with the outbox's backstop age short enough to fire within the run. The
 * server's heap, outbox depth, descriptors and threads are sampled all along into
 * {@code soak.csv}, plotted into {@code soak.png}, and judged flat or not in {@code soak.md};
 * then the load's own reconciliation (every message, every hook delivery).
 * <p>
 * Design note, flat: a series is flat when what it holds in the last quarter of the load is no
 * more than what it held in the second quarter (the first is warm-up: connections opening, pools
 * and caches filling, the first withdrawals) by {@link Series#relative} and {@link Series#slack}
 * together. The heap is judged by its floor (the least used heap seen in the quarter, the level a
 * collection gets back to); a leak raises the floor, garbage between collections does not. The
 * descriptors, threads and outbox depth are judged by their medians.
 */
@Command(name = "soak", mixinStandardHelpOptions = true, sortOptions = false,
        description = "A long run with reconnects, reclaim, retention and hooks; heap, outbox depth and descriptors sampled, plotted and judged.")
final class Soak implements Callable<Integer> {

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

    @Option(names = "--server-jar", defaultValue = "target/waterline-0.1.0-SNAPSHOT.jar", description = "Default: ${DEFAULT-VALUE}")
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
            new Series("heap_used_mb", true, 1.25, 32, "MB"),
            new Series("descriptors", false, 1.10, 20, ""),
            new Series("threads", false, 1.10, 10, ""),
            new Series("outbox_depth", false, 1.50, 2000, "rows"));

    @Override
    public Integer call() throws Exception {
        if (plotOnly != null) {
            List<double[]> rows = read(plotOnly);
            Path dir = plotOnly.toAbsolutePath().getParent();
            plot(rows, dir.resolve("soak.png"));
            Verdict v = judge(rows);
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
        LoadCli cli = new LoadCli();
        new CommandLine(cli).setCaseInsensitiveEnumValuesAllowed(true).setOverwrittenOptionsAllowed(true).parseArgs(args.toArray(String[]::new));
        LoadConfig cfg = cli.config();
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
            Verdict v = judge(rows);
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

        @Override
        public void run() {
            long start = System.nanoTime();
            try {
                Files.writeString(csv, "minutes," + String.join(",", COLUMNS) + "\n");
                while (!Thread.currentThread().isInterrupted()) {
                    long from = run.offerStartNanos == 0 ? start : run.offerStartNanos;
                    Map<String, Double> m = scrape();
                    long pid = deployment.nodePid(0);
                    double fds = descriptors(pid);
                    double[] row = {
                            (System.nanoTime() - from) / 60e9,
                            run.offering() ? 1 : 0,
                            run.stats.accepted.sum(),
                            run.clients().stream().filter(SimClient::connected).count(),
                            mb(m.get("heap")),
                            mb(m.get("jvm_gc_live_data_size_bytes")),
                            mb(m.get("waterline_process_resident_memory_bytes")),
                            m.getOrDefault("waterline_outbox_depth", -1.0),
                            m.getOrDefault("waterline_outbox_oldest_age_seconds", -1.0),
                            fds,
                            m.getOrDefault("jvm_threads_live_threads", -1.0),
                            m.getOrDefault("waterline_reaper_withdrawals_total", -1.0),
                            m.getOrDefault("waterline_outbox_reclaimed_backstop_total", -1.0),
                            m.getOrDefault("waterline_hook_deliveries_total", -1.0)};
                    StringBuilder b = new StringBuilder();
                    for (int i = 0; i < row.length; i++) {
                        b.append(i == 0 ? "" : ",").append(String.format(Locale.ROOT, i == 0 ? "%.3f" : "%.1f", row[i]));
                    }
                    Files.writeString(csv, b.append('\n'), java.nio.file.StandardOpenOption.APPEND);
                    TimeUnit.NANOSECONDS.sleep(every.toNanos());
                }
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            catch (IOException e) {
                failures++;
                lastFailure = "soak.csv: " + e;
            }
        }

        private static double mb(Double bytes) {
            return bytes == null ? -1 : bytes / (1 << 20);
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
            catch (IOException e) {
                failures++;
                lastFailure = e.toString();
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return sums;
        }
    }

    static List<double[]> read(Path csv) throws IOException {
        List<String> lines = Files.readAllLines(csv);
        List<double[]> rows = new ArrayList<>();
        for (String l : lines.subList(1, lines.size())) {
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

    /** One judged series: its level in the second quarter and in the last, and whether that is flat. */
    record Judged(Series series, double second, double last, boolean flat) {
    }

    record Verdict(double minutes, List<Judged> judged) {
        boolean flat() {
            return !judged.isEmpty() && judged.stream().allMatch(Judged::flat);
        }

        String markdown() {
            StringBuilder b = new StringBuilder(String.format(Locale.ROOT,
                    "Soak: %.0f minutes sampled. Second quarter against the last (flat: last ≤ second × relative + slack):%n%n", minutes));
            b.append("| series | level | second quarter | last quarter | allowed | flat |\n|---|---|---|---|---|---|\n");
            for (Judged j : judged) {
                b.append(String.format(Locale.ROOT, "| %s | %s | %.1f %s | %.1f %s | ≤ %.1f | %s |%n", j.series().column(),
                        j.series().floor() ? "floor (least seen)" : "median", j.second(), j.series().unit(), j.last(), j.series().unit(),
                        j.second() * j.series().relative() + j.series().slack(), j.flat() ? "yes" : "NO"));
            }
            return b.toString();
        }
    }

    /** The flat verdict of the class note over the rows taken while the load was offered. */
    static Verdict judge(List<double[]> rows) {
        int offering = col("offering");
        List<double[]> during = rows.stream().filter(r -> r[offering] == 1).toList();
        if (during.size() < 8) {
            return new Verdict(during.isEmpty() ? 0 : during.getLast()[0], List.of());
        }
        double end = during.getLast()[0];
        List<Judged> out = new ArrayList<>();
        for (Series s : JUDGED) {
            int c = col(s.column());
            double second = level(during, c, end / 4, end / 2, s.floor());
            double last = level(during, c, end * 3 / 4, end + 1e-9, s.floor());
            boolean seen = second >= 0 && last >= 0;
            out.add(new Judged(s, second, last, seen && last <= second * s.relative() + s.slack()));
        }
        return new Verdict(end, out);
    }

    private static double level(List<double[]> rows, int c, double from, double to, boolean floor) {
        List<Double> xs = rows.stream().filter(r -> r[0] >= from && r[0] < to && c < r.length && r[c] >= 0)
                .map(r -> r[c]).sorted().toList();
        if (xs.isEmpty()) {
            return -1;
        }
        return floor ? xs.getFirst() : xs.get(xs.size() / 2);
    }

    /** Heap (used and live after collection), outbox depth, descriptors and threads over the minutes of the load: one PNG. */
    static void plot(List<double[]> rows, Path png) throws IOException {
        System.setProperty("java.awt.headless", "true");
        NumberAxis minutes = new NumberAxis("minutes into the load");
        CombinedDomainXYPlot plot = new CombinedDomainXYPlot(minutes);
        Map<String, List<String>> panels = new LinkedHashMap<>();
        panels.put("heap MB", List.of("heap_used_mb", "heap_live_after_gc_mb"));
        panels.put("outbox rows", List.of("outbox_depth"));
        panels.put("descriptors, threads", List.of("descriptors", "threads"));
        panels.put("clients connected", List.of("connected"));
        for (var p : panels.entrySet()) {
            XYSeriesCollection data = new XYSeriesCollection();
            for (String name : p.getValue()) {
                XYSeries s = new XYSeries(name, false, true);
                int c = col(name);
                for (double[] r : rows) {
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
