package dev.waterline.load.chaos;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Collectors;

import dev.waterline.load.chat.LoadRun;
import dev.waterline.load.chat.Reconciler;
import dev.waterline.load.clients.Behaviour;
import dev.waterline.load.clients.SimClient;
import dev.waterline.load.deployment.Deployment;
import dev.waterline.load.deployment.FaultProxy;
import dev.waterline.load.deployment.ServerProcess;
import dev.waterline.load.run.LoadCli;
import dev.waterline.load.run.LoadConfig;
import dev.waterline.load.run.Report;
import dev.waterline.load.streams.StreamTraffic;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/**
 * {@code waterline-load chaos}: one fault per scenario, injected into a deployment the run starts
 * and owns ({@link Deployment}: private PostgreSQL and Redis, one or three nodes, fault proxies
 * where the scenario needs them) while the chat load is offered (a tenth of its sends edits and
 * reactions, a fiftieth deletes: {@code --entry-mix}, {@code --delete-mix}); then the load's own
 * reconciliation (G1 history and G3 every recipient after a final resync, each entry's effect,
 * and every hook delivery where the scenario has hooks) and one row per run: fault, accepted, lost, duplicates,
 * ratio, time to recover, and what the server answered meanwhile. Exit code 0 only when every
 * run lost nothing and passed its scenario's checks.
 * <p>
 * Design note, recovery: the harness samples its own counters every 250 ms. The fault ends when
 * its healing step has returned (PostgreSQL accepting connections again, a node ready, a proxy
 * letting traffic through), or when the injection returned for a fault that has no healing (a
 * FLUSHALL, a node killed for good). The load is cut into whole seconds from the injection on
 * (up to 30 s past the fault's end, or the load's end). The rate to hold is the one the deployment
 * kept before the fault: the accepted rate over the 10 s before the injection (after the ramp-up),
 * or the offered rate where that is lower or the window shorter than 3 s (three nodes on two
 * cores do not keep the offered rate even without a fault). A second falls short when a send in
 * it was answered {@code unavailable} or {@code overloaded}, or when it accepted less than 80 % of
 * that rate and so did the three seconds centred on it. At the full scale the two shared cores are
 * close to saturated and the accepted count swings ±25 % from one second to the next with no fault
 * at all (batches, collections): judged second by second against 90 %, a fifth of the seconds
 * before any fault fell short and a run's verdict turned on its last second; a dip that one good
 * neighbour evens out is that swing, not the fault. The service has recovered at the end of the
 * last second that fell short (at the injection if none did: it never faltered; not at all if the
 * last second looked at fell short). Both times are given: from the fault's start, and from its
 * end (0 when it recovered before the fault ended, as clients failing over to a live node do).
 * What the server answered is counted from the injection to 30 s past the fault's end (or the
 * load's end, or the recovery if later): refusals by code, errors, closes by code, failed
 * connects. The samples are kept in each run's {@code samples.csv}, and the times of the fault's
 * steps in {@code steps.csv}, so that a run can be judged again ({@code --rejudge}).
 */
@Command(name = "chaos", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Chaos under load: each scenario's fault injected into a private deployment, every message reconciled.")
public final class Chaos implements Callable<Integer> {

    @Option(names = "--scenarios", split = ",", defaultValue = "all",
            description = "Scenarios to run, comma-separated, or all, or short (kill-single, pg-stop, client-net). Default: ${DEFAULT-VALUE}")
    List<String> scenarios;

    @Option(names = "--runs", defaultValue = "1", description = "Runs of each scenario (the table gives medians). Default: ${DEFAULT-VALUE}")
    int runs;

    @Option(names = "--scale", defaultValue = "full",
            description = "full: 600 clients at 2000 msg/s for 60 s, the fault 20 s in; short: 200 clients at 500 msg/s, otherwise the same."
                    + " Default: ${DEFAULT-VALUE}")
    String scale;

    @Option(names = "--server-jar", defaultValue = ServerProcess.DEFAULT_JAR, converter = ServerProcess.JarConverter.class, description = "Default: ${DEFAULT-VALUE}")
    Path serverJar;

    @Option(names = "--out", description = "Folder for each run's report and the table. Default: target/load-results/chaos-<time>")
    Path out;

    @Option(names = "--load-arg", description = "An extra argument for every run's load generator, e.g. --load-arg=--server-jvm-opts=-Xmx1g (repeatable).")
    List<String> loadArgs = new ArrayList<>();

    @Option(names = "--entry-mix", defaultValue = "0.10", description = "The fraction of the chat load's sends that are edits"
            + " and reactions, half each (the generator's --entry-mix); their effects are reconciled too. Default: ${DEFAULT-VALUE}")
    double entryMix;

    @Option(names = "--delete-mix", defaultValue = "0.02", description = "The fraction that are deletes, each reconciled as gone"
            + " everywhere (history, the message's GET, its edits' text). Default: ${DEFAULT-VALUE}")
    double deleteMix;

    @Option(names = "--rejudge", description = "Run nothing: judge the recovery of the runs under this folder again from their"
            + " samples.csv, steps.csv and report.json (runs of an earlier rule), and write rejudged.md there.")
    Path rejudge;

    /** One step of a scenario, this far into the offered load. */
    record Step(Duration at, Role role, String what, StepAction action) {
    }

    enum Role { PREPARE, INJECT, HEAL }

    interface StepAction {
        void run(Ctx ctx) throws Exception;
    }

    /** What a step can reach: the deployment and the run. */
    record Ctx(Deployment deployment, LoadRun run) {
    }

    /**
     * A scenario: its name, the fault in words, the deployment it needs, its load's own arguments,
     * its steps, and the ratio it must keep (0: none asked).
     */
    record Scenario(String name, String fault, Deployment.Options options, List<String> loadArgs, List<Step> steps, double maxRatio) {
    }

    /** The result of one run of one scenario: the row of the table. */
    record Row(String scenario, String fault, int run, long accepted, long lost, long hookLost, long duplicates, double ratio,
               double recoverSeconds, double sinceInjectSeconds, long onlyByResync, String answers, StreamTraffic.Result streams,
               List<String> problems, Path report) {
        boolean passed() {
            return lost == 0 && hookLost == 0 && (streams == null || streams.lost() == 0) && problems.isEmpty();
        }

        long allLost() {
            return lost + hookLost + (streams == null ? 0 : streams.lost());
        }
    }

    private PrintStream err = System.err;

    @Override
    public Integer call() throws Exception {
        if (rejudge != null) {
            String table = Rejudge.table(rejudge);
            Files.writeString(rejudge.resolve("rejudged.md"), table);
            System.out.println(table);
            return 0;
        }
        Shape shape = "short".equals(scale) ? Shape.SHORT : Shape.FULL;
        List<Scenario> chosen = choose(shape);
        Path dir = out != null ? out
                : Path.of("target", "load-results", "chaos-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        Files.createDirectories(dir);
        List<Row> rows = new ArrayList<>();
        System.out.println(header());
        // round by round (every scenario once, then again): a suite cut short has every scenario
        // measured as often, give or take one (the table's runs column says how often)
        for (int r = 1; r <= runs; r++) {
            for (Scenario s : chosen) {
                Row row;
                try {
                    row = run(s, r, shape, dir.resolve(s.name() + "-" + r));
                }
                catch (Exception e) {
                    // a run that could not finish (its deployment did not come back, say) is a failed row, and the suite goes on
                    err.println("waterline-load chaos: " + s.name() + " run " + r + " did not finish: " + e);
                    e.printStackTrace(err);
                    row = new Row(s.name(), s.fault(), r, 0, 0, 0, 0, 0, -1, -1, 0, "the run did not finish", null,
                            List.of("did not finish: " + e), dir.resolve(s.name() + "-" + r));
                }
                rows.add(row);
                System.out.println(line(row));
                Files.writeString(dir.resolve("rows.md"), header() + "\n" + rows.stream().map(Chaos::line).collect(Collectors.joining("\n")) + "\n");
                Files.writeString(dir.resolve("chaos.md"), medians(rows));
                LoadRun.JSON.writeValue(dir.resolve("chaos.json").toFile(), rows.stream().map(Chaos::json).toList());
            }
        }
        String table = medians(rows);
        Files.writeString(dir.resolve("chaos.md"), table);
        LoadRun.JSON.writeValue(dir.resolve("chaos.json").toFile(), rows.stream().map(Chaos::json).toList());
        System.out.println();
        System.out.println(table);
        System.out.println("Reports in " + dir.toAbsolutePath());
        return rows.stream().allMatch(Row::passed) ? 0 : 2;
    }

    /** The load of a scenario at one scale: clients, rate, how long, when the fault comes, and the streams beside it. */
    record Shape(int clients, double rate, Duration duration, Duration faultAt, int streams, double chunksPerSecond) {
        static final Shape FULL = new Shape(600, 2000, Duration.ofSeconds(60), Duration.ofSeconds(20), 20, 10);
        static final Shape SHORT = new Shape(200, 500, Duration.ofSeconds(60), Duration.ofSeconds(20), 10, 5);
    }

    private List<Scenario> choose(Shape shape) {
        Map<String, Scenario> all = new LinkedHashMap<>();
        for (Scenario s : scenarios(shape)) {
            all.put(s.name(), s);
        }
        List<String> names = new ArrayList<>();
        for (String n : scenarios) {
            switch (n) {
                case "all" -> names.addAll(all.keySet());
                case "short" -> names.addAll(List.of("kill-single", "pg-stop", "client-net"));
                default -> {
                    if (!all.containsKey(n)) {
                        throw new CommandLine.ParameterException(new CommandLine(this), "unknown scenario " + n + "; known: " + all.keySet());
                    }
                    names.add(n);
                }
            }
        }
        return names.stream().distinct().map(all::get).toList();
    }

    /** Every scenario, its times placed within the load of {@code shape}. */
    static List<Scenario> scenarios(Shape shape) {
        Duration at = shape.faultAt();
        Deployment.Options one = new Deployment.Options(1, false, false, false, false, 0);
        Deployment.Options three = new Deployment.Options(3, false, false, false, false, 0);
        List<Scenario> s = new ArrayList<>();
        s.add(new Scenario("kill-single", "kill -9 of the only node, restarted 5 s later", one, List.of(), List.of(
                new Step(at, Role.INJECT, "kill -9 of the node", c -> {
                    c.run().nodeDies(0);
                    c.deployment().kill(0);
                }),
                new Step(at.plusSeconds(5), Role.HEAL, "the node restarted", c -> c.deployment().restart(0))), 0));
        s.add(new Scenario("kill-node", "kill -9 of 1 node of 3, not restarted", three, List.of(), List.of(
                new Step(at, Role.INJECT, "kill -9 of node 3", c -> {
                    c.run().nodeDies(2);
                    c.deployment().kill(2);
                })), 0));
        s.add(new Scenario("kill-node-restart", "kill -9 of 1 node of 3, restarted 5 s later", three, List.of(), List.of(
                new Step(at, Role.INJECT, "kill -9 of node 3", c -> {
                    c.run().nodeDies(2);
                    c.deployment().kill(2);
                }),
                new Step(at.plusSeconds(5), Role.HEAL, "node 3 restarted", c -> c.deployment().restart(2))), 0));
        s.add(new Scenario("pg-stop", "PostgreSQL stopped for 20 s, then started", one, List.of(), List.of(
                new Step(at, Role.INJECT, "PostgreSQL stopped", c -> c.deployment().stopPostgres()),
                new Step(at.plusSeconds(20), Role.HEAL, "PostgreSQL started", c -> c.deployment().startPostgresAgain())), 0));
        s.add(new Scenario("pg-slow", "PostgreSQL +200 ms each way, 1 % of connections reset, for 30 s",
                new Deployment.Options(1, true, false, false, false, 0), List.of(), List.of(
                new Step(at, Role.INJECT, "PostgreSQL slow and lossy", c -> c.deployment().pgProxy().faults(
                        new FaultProxy.Faults(Duration.ofMillis(200), Duration.ZERO, 0.01, 64 * 1024, 16))),
                new Step(at.plusSeconds(30), Role.HEAL, "PostgreSQL path healthy", c -> c.deployment().pgProxy().faults(FaultProxy.Faults.none()))), 0));
        s.add(new Scenario("redis-flush", "FLUSHALL on Redis", one, List.of(), List.of(
                new Step(at, Role.INJECT, "FLUSHALL", c -> c.deployment().flushRedis())), 0));
        s.add(new Scenario("redis-restart", "Redis stopped and started on its append-only file (2 s down)", one, List.of(), List.of(
                new Step(at, Role.INJECT, "Redis restarted", c -> c.deployment().restartRedis(Duration.ofSeconds(2)))), 0));
        s.add(new Scenario("redis-cut", "Redis unreachable for 30 s (connections cut, new ones refused)",
                new Deployment.Options(1, false, true, false, false, 0), List.of(), redisCut(at), 0));
        s.add(new Scenario("redis-cut-single", "Redis unreachable for 30 s, the node configured as the only one",
                new Deployment.Options(1, false, true, false, false, 0), List.of("--server-arg=--waterline.cluster.enabled=false"),
                redisCut(at), 0));
        s.add(new Scenario("redis-stale-replica", "a Redis replica detached, then promoted 15 s later (stale marker)",
                new Deployment.Options(1, false, true, false, true, 0), List.of(), List.of(
                new Step(at.minusSeconds(15), Role.PREPARE, "replica detached", c -> c.deployment().detachReplica()),
                new Step(at, Role.INJECT, "stale replica promoted", c -> c.deployment().promoteReplica())), 0));
        s.add(new Scenario("client-net", "clients' network: 100 ms jitter, 1 % of connections cut mid-frame, for 40 s",
                new Deployment.Options(1, false, false, true, false, 0), List.of(), List.of(
                new Step(at.minusSeconds(10), Role.INJECT, "bad client network", c -> {
                    for (FaultProxy p : c.deployment().clientProxies()) {
                        p.faults(new FaultProxy.Faults(Duration.ZERO, Duration.ofMillis(100), 0.01, 64 * 1024, 17));
                    }
                }),
                new Step(at.plusSeconds(30), Role.HEAL, "client network healthy", c -> {
                    for (FaultProxy p : c.deployment().clientProxies()) {
                        p.faults(FaultProxy.Faults.none());
                    }
                })), 1.05));
        s.add(new Scenario("wedged", "10 % of clients stop reading their socket", one,
                List.of("--stop-reading", "0.1"), List.of(), 0));
        s.add(new Scenario("never-ack", "10 % of clients never ack", one, List.of("--never-ack", "0.1"), List.of(), 0));
        s.add(new Scenario("storm", "a reconnect storm: 5,000 clients dropped at once", one,
                List.of("--clients", "5000"), List.of(
                new Step(at, Role.INJECT, "5,000 connections dropped", c -> c.run().storm(5000))), 0));
        s.add(new Scenario("hook-down", "every chat's HTTP hook target down for the whole load", one,
                List.of("--hook-kind", "http", "--hook-outage-at", "PT0S", "--hook-outage-for", shape.duration().toString(),
                        "--hook-drain", "PT15M"), List.of(), 0));
        s.add(new Scenario("wal-full", "PostgreSQL's WAL volume full for 20 s (ballast on a 384 MB tmpfs), then freed",
                new Deployment.Options(1, false, false, false, false, 384L << 20), List.of(), List.of(
                new Step(at, Role.INJECT, "WAL volume filled", c -> c.deployment().fillWal()),
                new Step(at.plusSeconds(20), Role.HEAL, "WAL volume freed (PostgreSQL started if it had stopped)", c -> {
                    c.deployment().freeWal();
                    c.run().note(c.deployment().startPostgresAgain());
                })), 0));
        return s;
    }

    /** Redis unreachable through its proxy from {@code at} for 30 s. */
    private static List<Step> redisCut(Duration at) {
        return List.of(
                new Step(at, Role.INJECT, "Redis unreachable", c -> c.deployment().redisProxy().refuse()),
                new Step(at.plusSeconds(30), Role.HEAL, "Redis reachable", c -> c.deployment().redisProxy().restore()));
    }

    private Row run(Scenario s, int r, Shape shape, Path dir) throws Exception {
        List<String> problems = new CopyOnWriteArrayList<>();
        if (s.options().walTmpfsBytes() > 0) {
            String why = Deployment.walTmpfsUnavailable();
            if (why != null) {
                err.println("waterline-load chaos: " + s.name() + " skipped: " + why);
                return new Row(s.name(), s.fault(), r, 0, 0, 0, 0, 0, -1, -1, 0, "skipped: " + why, null, List.of(), null);
            }
        }
        List<String> args = new ArrayList<>(List.of("--clients", Integer.toString(shape.clients()), "--rate", Double.toString(shape.rate()),
                "--duration", shape.duration().toString(), "--server-jar", serverJar.toString(), "--quiet",
                "--drain", "PT120S", "--outbox-drain", "PT90S", "--out", dir.toString(), "--label", "chaos " + s.name() + " " + r,
                "--entry-mix", Double.toString(entryMix), "--delete-mix", Double.toString(deleteMix)));
        args.addAll(loadArgs);
        args.addAll(s.loadArgs());
        LoadConfig cfg = LoadCli.configOf(args);
        err.println("waterline-load chaos: " + s.name() + " run " + r + ": " + s.fault());
        ServerProcess.Launch launch = new ServerProcess.Launch(cfg.serverJar(), cfg.serverJvmOpts(), cfg.serverArgs(), s.options().nodes());
        Deployment d = new Deployment(s.options(), dir.resolve("deployment"), launch);
        try (d) {
            d.start();
            Ctx[] ctx = new Ctx[1];
            List<LoadRun.Timed> timed = s.steps().stream()
                    .map(st -> new LoadRun.Timed(st.at(), st.what(), () -> st.action().run(ctx[0]))).toList();
            LoadRun run = new LoadRun(cfg, err, d, timed);
            ctx[0] = new Ctx(d, run);
            Sampler sampler = new Sampler(run);
            StreamTraffic streams = new StreamTraffic(d.clientBases(), d.jwtSecret(), shape.streams(), shape.chunksPerSecond(), err);
            java.util.concurrent.CompletableFuture<StreamTraffic.Result> streamResult = new java.util.concurrent.CompletableFuture<>();
            Thread sampling = Thread.ofPlatform().daemon().name("chaos-sampler").start(sampler);
            Thread streaming = null;
            Report report;
            boolean finished = false;
            try {
                streams.start();
                streaming = Thread.ofPlatform().daemon().name("chaos-streams").start(() -> {
                    try {
                        // appends go on for as long as the chat load is offered, then the streams are completed and reconciled
                        while (run.offerStartNanos == 0 || System.nanoTime() < run.offerStartNanos + cfg.duration().toNanos()) {
                            if (!run.active()) {
                                break;
                            }
                            TimeUnit.MILLISECONDS.sleep(100);
                        }
                        streamResult.complete(streams.finish(Duration.ofSeconds(120)));
                    }
                    catch (Exception e) {
                        streamResult.completeExceptionally(e);
                    }
                });
                report = run.execute();
                finished = true;
            }
            finally {
                sampling.interrupt();
                if (!finished) {
                    // the run failed: the streams stop at once, their verdict is not wanted
                    streams.stop();
                }
                if (streaming != null) {
                    streaming.join();
                }
            }
            StreamTraffic.Result streamed = null;
            try {
                streamed = streamResult.get();
            }
            catch (java.util.concurrent.ExecutionException e) {
                problems.add("streams: " + e.getCause());
            }
            problems.addAll(run.timedFailures);
            for (Step st : s.steps()) {
                if (!run.timedAt.containsKey(st.what())) {
                    problems.add("step not run: " + st.what());
                }
            }
            Recovery rec = sampler.recovery(run, s, cfg);
            sampler.write(dir.resolve("samples.csv"), run.offerStartNanos);
            writeSteps(dir.resolve("steps.csv"), s, run);
            double ratio = ratioOfNormal(report);
            if (s.maxRatio() > 0 && ratio > s.maxRatio()) {
                problems.add("ratio " + ratio + " above " + s.maxRatio());
            }
            if (rec.seconds() == -1) {
                problems.add("not recovered within the load");
            }
            if (report.lost() > 0) {
                problems.add(report.lost() + " lost (" + report.lostSample() + ")");
            }
            if (report.entryMismatches() > 0) {
                problems.add(report.entryMismatches() + " edits, deletes or reactions without their effect (" + report.entryMismatchSample() + ")");
            }
            if (run.hookLost > 0) {
                problems.add(run.hookLost + " hook deliveries lost");
            }
            if (streamed != null) {
                Files.writeString(dir.resolve("streams.md"), "Streams beside the load: " + streamed.line() + "\n");
            }
            return new Row(s.name(), s.fault(), r, report.accepted(), report.lost(), run.hookLost, report.duplicatesSeen(), ratio,
                    rec.seconds(), rec.sinceInject(), onlyByResync(run), rec.answers(), streamed, List.copyOf(problems), dir.resolve("report.md"));
        }
    }

    /**
     * Deliveries that reached their recipient only by a resync from history, never live: expected
     * where a client lost its connection, a sign of a row retired or reclaimed before its ack where
     * none did (a scenario whose clients all stayed connected should show 0). Reported, not judged:
     * whether every client stayed connected is the scenario's to read from the closes it shows.
     */
    static long onlyByResync(LoadRun run) {
        Map<String, SimClient> byUser = new java.util.HashMap<>();
        for (SimClient c : run.clients()) {
            byUser.put(c.userId, c);
        }
        long n = 0;
        for (Reconciler.Accepted a : run.accepted) {
            for (String r : a.recipients()) {
                SimClient c = byUser.get(r);
                if (c != null && c.behaviour == Behaviour.NORMAL && !c.liveCounts.containsKey(a.messageId())) {
                    n++;
                }
            }
        }
        return n;
    }

    /** Live deliveries per expected of the clients that behave (the misbehaving ones are what a scenario breaks). */
    private static double ratioOfNormal(Report report) {
        Map<String, Object> normal = report.byBehaviour().get("normal");
        return normal == null ? report.deliveriesPerExpected() : ((Number) normal.get("ratio")).doubleValue();
    }

    /** When each step of the fault began and ended, in seconds into the load (the samples' clock), so that a run can be judged again. */
    private static void writeSteps(Path file, Scenario s, LoadRun run) throws java.io.IOException {
        StringBuilder b = new StringBuilder("step,role,began,ended\n");
        for (Step st : s.steps()) {
            long[] t = run.timedAt.get(st.what());
            if (t != null) {
                b.append(String.format(java.util.Locale.ROOT, "%s,%s,%.3f,%.3f%n", st.what().replace(',', ';'), st.role(),
                        (t[0] - run.offerStartNanos) / 1e9, (t[1] - run.offerStartNanos) / 1e9));
            }
        }
        Files.writeString(file, b);
    }

    /** A recovery time of a scenario whose fault lasts the whole load (misbehaving clients): nothing to recover from. */
    static final double THROUGHOUT = -2;
    /** A recovery time of a run whose fault ended only after the load (a node whose restart under the load took longer than it). */
    static final double OUTLASTED = -3;

    /** Seconds from the end of the fault to recovery, and from its start (-1: not recovered; {@link #THROUGHOUT}; {@link #OUTLASTED}); what was answered around the fault. */
    record Recovery(double seconds, double sinceInject, String answers) {
    }

    /** The harness's own counters every 250 ms while the load runs. */
    static final class Sampler implements Runnable {
        record Sample(long nanos, long accepted, Map<String, Long> counts) {
        }

        private final LoadRun run;
        private final List<Sample> samples = new CopyOnWriteArrayList<>();

        Sampler(LoadRun run) {
            this.run = run;
        }

        @Override
        public void run() {
            while (!Thread.currentThread().isInterrupted()) {
                Map<String, Long> counts = new TreeMap<>();
                add(counts, "refused ", run.stats.rejectedByCode);
                add(counts, "error ", run.stats.errorsByCode);
                run.stats.closesByCode.forEach((k, v) -> counts.put("close " + k, v.sum()));
                run.stats.connectFailures.forEach((k, v) ->
                        counts.merge("connect " + k.replace("AnnotatedConnectException", "ConnectException"), v.sum(), Long::sum));
                samples.add(new Sample(System.nanoTime(), run.stats.accepted.sum(), counts));
                try {
                    TimeUnit.MILLISECONDS.sleep(250);
                }
                catch (InterruptedException e) {
                    return;
                }
            }
        }

        private static void add(Map<String, Long> into, String prefix, Map<String, LongAdder> from) {
            from.forEach((k, v) -> into.put(prefix + k, v.sum()));
        }

        Recovery recovery(LoadRun run, Scenario s, LoadConfig cfg) {
            long start = run.offerStartNanos;
            long injectAt = Long.MAX_VALUE;
            long endAt = 0;
            for (Step st : s.steps()) {
                long[] t = run.timedAt.get(st.what());
                if (t == null) {
                    continue;
                }
                if (st.role() == Role.INJECT) {
                    injectAt = Math.min(injectAt, t[0]);
                }
                if (st.role() != Role.PREPARE) {
                    endAt = Math.max(endAt, t[1]);
                }
            }
            if (s.steps().isEmpty()) {
                // a scenario without a timed fault (the clients misbehave throughout): its answers over the whole load
                injectAt = start;
                endAt = start + cfg.duration().toNanos();
            }
            if (injectAt == Long.MAX_VALUE) {
                return new Recovery(-1, -1, "the fault was not injected");
            }
            long loadEnd = start + cfg.duration().toNanos();
            List<Sample> all = List.copyOf(samples);
            if (s.steps().isEmpty()) {
                Sample from = at(all, injectAt);
                Sample to = at(all, endAt);
                return new Recovery(THROUGHOUT, THROUGHOUT, from == null || to == null ? "no samples" : answers(from, to));
            }
            long baselineFrom = Math.max(start + cfg.rampUp().toNanos(), injectAt - TimeUnit.SECONDS.toNanos(10));
            double before = baseline(all, baselineFrom, injectAt);
            return recover(all, injectAt, endAt, loadEnd, before > 0 ? Math.min(cfg.rate(), before) : cfg.rate());
        }

        /** One whole second (or a little more, between the samples that bound it). */
        record Second(Sample from, Sample to) {
            double perSecond() {
                return (to.accepted() - from.accepted()) * 1e9 / (to.nanos() - from.nanos());
            }
        }

        /** The whole seconds from the first sample at or after {@code from}, each ending at or before {@code to}. */
        private static List<Second> seconds(List<Sample> all, long from, long to) {
            List<Second> out = new ArrayList<>();
            int i = 0;
            while (i < all.size() && all.get(i).nanos() < from) {
                i++;
            }
            while (i < all.size()) {
                Sample a = all.get(i);
                int j = i + 1;
                while (j < all.size() && all.get(j).nanos() - a.nanos() < 1_000_000_000L) {
                    j++;
                }
                if (j >= all.size() || all.get(j).nanos() > to) {
                    break;
                }
                out.add(new Second(a, all.get(j)));
                i = j;
            }
            return out;
        }

        /**
         * Accepted per second from {@code from} to {@code to}, between the samples nearest them; -1
         * when the window is shorter than 3 s (the fault came too early in the load for a baseline).
         */
        static double baseline(List<Sample> all, long from, long to) {
            if (to - from < TimeUnit.SECONDS.toNanos(3)) {
                return -1;
            }
            Sample a = at(all, from);
            Sample b = at(all, to);
            if (a == null || b == null || b.nanos() - a.nanos() < TimeUnit.SECONDS.toNanos(3)) {
                return -1;
            }
            return (b.accepted() - a.accepted()) * 1e9 / (b.nanos() - a.nanos());
        }

        /**
         * Whole seconds from the injection on, up to 30 s after the fault's end (or the load's end):
         * the service has recovered at the end of the last second that fell short (see the class note).
         */
        static Recovery recover(List<Sample> all, long injectAt, long endAt, long loadEnd, double rate) {
            if (endAt >= loadEnd) {
                // nothing to recover from within the load: the fault was still on when it ended
                Sample from = at(all, injectAt);
                Sample to = at(all, loadEnd);
                return new Recovery(OUTLASTED, OUTLASTED, from == null || to == null ? "no samples" : answers(from, to));
            }
            long limit = Math.min(loadEnd, endAt + TimeUnit.SECONDS.toNanos(30));
            // from a second before the injection, so that the first second after it has a neighbour on each side
            List<Second> whole = seconds(all, injectAt - TimeUnit.SECONDS.toNanos(1), limit);
            long recoveredAt = injectAt;
            boolean lastShort = false;
            boolean looked = false;
            for (int k = 0; k < whole.size(); k++) {
                Second second = whole.get(k);
                if (second.from().nanos() < injectAt) {
                    continue;
                }
                looked = true;
                long refusals = delta(second.from(), second.to(), "refused unavailable")
                        + delta(second.from(), second.to(), "refused overloaded");
                double around = (whole.get(Math.max(0, k - 1)).perSecond() + second.perSecond()
                        + whole.get(Math.min(whole.size() - 1, k + 1)).perSecond()) / 3;
                lastShort = refusals > 0 || (second.perSecond() < 0.8 * rate && around < 0.8 * rate);
                if (lastShort) {
                    recoveredAt = second.to().nanos();
                }
            }
            if (!looked) {
                return new Recovery(-1, -1, "no samples between the fault and the end of the load");
            }
            boolean recovered = !lastShort;
            // what clients met around the fault: its effects (closes, failed reconnects) may come after
            // the service is judged back, as when clients fail over to a live node within a second
            Sample from = at(all, injectAt);
            Sample to = at(all, Math.max(recoveredAt, limit));
            String answers = from == null || to == null ? "no samples" : answers(from, to);
            double seconds = !recovered ? -1 : Math.max(0, Math.round((recoveredAt - endAt) / 1e8) / 10.0);
            double sinceInject = !recovered ? -1 : Math.max(0, Math.round((recoveredAt - injectAt) / 1e8) / 10.0);
            return new Recovery(seconds, sinceInject, answers);
        }

        /** The samples as CSV: seconds into the load, accepted so far, and every count by name. */
        void write(Path file, long startNanos) throws java.io.IOException {
            List<Sample> all = List.copyOf(samples);
            java.util.SortedSet<String> names = new java.util.TreeSet<>();
            all.forEach(x -> names.addAll(x.counts().keySet()));
            StringBuilder b = new StringBuilder("seconds,accepted");
            names.forEach(n -> b.append(',').append(n.replace(',', ';')));
            b.append('\n');
            for (Sample x : all) {
                b.append(String.format(java.util.Locale.ROOT, "%.2f", (x.nanos() - startNanos) / 1e9)).append(',').append(x.accepted());
                names.forEach(n -> b.append(',').append(x.counts().getOrDefault(n, 0L)));
                b.append('\n');
            }
            Files.writeString(file, b);
        }

        private static Sample at(List<Sample> all, long nanos) {
            Sample found = null;
            for (Sample s : all) {
                if (s.nanos() <= nanos || found == null) {
                    found = s;
                }
                if (s.nanos() > nanos) {
                    break;
                }
            }
            return found;
        }

        private static long delta(Sample a, Sample b, String key) {
            return b.counts().getOrDefault(key, 0L) - a.counts().getOrDefault(key, 0L);
        }

        private static String answers(Sample from, Sample to) {
            List<Map.Entry<String, Long>> d = new ArrayList<>();
            for (var e : to.counts().entrySet()) {
                long n = e.getValue() - from.counts().getOrDefault(e.getKey(), 0L);
                if (n > 0) {
                    d.add(Map.entry(e.getKey(), n));
                }
            }
            if (d.isEmpty()) {
                return "nothing but accepted";
            }
            d.sort(Map.Entry.<String, Long>comparingByValue().reversed());
            return d.stream().limit(4).map(e -> e.getKey() + " ×" + e.getValue()).collect(Collectors.joining(", "));
        }
    }

    static String header() {
        return "| scenario | run | fault | accepted | lost | duplicates | ratio | only by resync | recovered after the fault (after its start) |"
                + " answers during the fault | stream chunks (lost, duplicates) | verdict |\n"
                + "|---|---|---|---|---|---|---|---|---|---|---|---|";
    }

    static String line(Row r) {
        return "| " + r.scenario() + " | " + r.run() + " | " + r.fault() + " | " + r.accepted() + " | " + r.allLost()
                + (r.hookLost() > 0 ? " (" + r.hookLost() + " hook)" : "") + " | " + r.duplicates() + " | " + r.ratio() + " | "
                + r.onlyByResync() + " | " + (r.report() == null ? "skipped" : recovery(r.recoverSeconds(), r.sinceInjectSeconds()))
                + " | " + r.answers() + " | " + streams(r.streams()) + " | "
                + (r.report() == null ? "skipped" : r.passed() ? "pass" : "FAIL: " + String.join("; ", r.problems())) + " |";
    }

    private static String recovery(double after, double since) {
        return after == THROUGHOUT ? "n/a (the whole load)" : after == OUTLASTED ? "n/a (the fault outlasted the load)"
                : after < 0 ? "not recovered" : after + " s (" + since + " s)";
    }

    private static String streams(StreamTraffic.Result s) {
        return s == null ? "—" : s.stored() + " (" + s.lost() + ", " + s.duplicates() + ")";
    }

    /** One line per scenario: medians over its runs (lost: the worst run), the answers of the median run. */
    static String medians(List<Row> rows) {
        Map<String, List<Row>> by = rows.stream().collect(Collectors.groupingBy(Row::scenario, LinkedHashMap::new, Collectors.toList()));
        StringBuilder b = new StringBuilder("| scenario | fault | runs | accepted | lost (worst run) | duplicates | ratio | only by resync |"
                + " recovered after the fault (after its start) | answers during the fault (median run) | stream chunks (lost, duplicates)"
                + " (median run) | verdict |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (var e : by.entrySet()) {
            List<Row> rs = e.getValue();
            // the run shown for answers and streams is the median by time to recover, a run that did not recover counting as the slowest
            Row mid = rs.stream().sorted(Comparator.comparingDouble(r -> r.recoverSeconds() == -1 ? Double.MAX_VALUE : r.recoverSeconds()))
                    .toList().get(rs.size() / 2);
            long lost = rs.stream().mapToLong(Row::allLost).max().orElse(0);
            long notRecovered = rs.stream().filter(r -> r.recoverSeconds() == -1).count();
            long outlasted = rs.stream().filter(r -> r.recoverSeconds() == OUTLASTED).count();
            double rec = median(rs.stream().map(Row::recoverSeconds).toList());
            double since = median(rs.stream().map(Row::sinceInjectSeconds).toList());
            String recovered = mid.report() == null ? "skipped"
                    : notRecovered > 0 ? "not recovered in " + notRecovered + " of " + rs.size()
                    : outlasted > 0 ? "n/a: the fault outlasted the load in " + outlasted + " of " + rs.size() : recovery(rec, since);
            b.append("| ").append(e.getKey()).append(" | ").append(rs.getFirst().fault()).append(" | ").append(rs.size())
                    .append(" | ").append((long) median(rs.stream().map(r -> (double) r.accepted()).toList()))
                    .append(" | ").append(lost)
                    .append(" | ").append((long) median(rs.stream().map(r -> (double) r.duplicates()).toList()))
                    .append(" | ").append(median(rs.stream().map(Row::ratio).toList()))
                    .append(" | ").append((long) median(rs.stream().map(r -> (double) r.onlyByResync()).toList()))
                    .append(" | ").append(recovered)
                    .append(" | ").append(mid.answers())
                    .append(" | ").append(streams(mid.streams()))
                    .append(" | ").append(mid.report() == null ? "skipped" : rs.stream().allMatch(Row::passed) ? "pass" : "FAIL").append(" |\n");
        }
        return b.toString();
    }

    /**
     * The recovery of runs measured earlier, judged again by the rule of the class note from what
     * each run kept: its samples (seconds into the load, accepted, counts by name), its steps'
     * times and its configuration.
     */
    static final class Rejudge {

        private Rejudge() {
        }

        static String table(Path suite) throws java.io.IOException {
            StringBuilder runs = new StringBuilder("| run | recovered after the fault (after its start) | answers around the fault |\n|---|---|---|\n");
            Map<String, List<Recovery>> byScenario = new TreeMap<>();
            List<Path> dirs;
            try (var list = Files.list(suite)) {
                dirs = list.filter(d -> Files.exists(d.resolve("samples.csv")) && Files.exists(d.resolve("steps.csv"))
                        && Files.exists(d.resolve("report.json"))).sorted().toList();
            }
            for (Path d : dirs) {
                Recovery r = judge(d);
                String name = d.getFileName().toString();
                String scenario = name.lastIndexOf('-') > 0 ? name.substring(0, name.lastIndexOf('-')) : name;
                byScenario.computeIfAbsent(scenario, k -> new ArrayList<>()).add(r);
                runs.append("| ").append(name).append(" | ").append(recovery(r.seconds(), r.sinceInject())).append(" | ")
                        .append(r.answers()).append(" |\n");
            }
            StringBuilder b = new StringBuilder("| scenario | runs | recovered after the fault (after its start), median |\n|---|---|---|\n");
            byScenario.forEach((name, rs) -> {
                List<Recovery> ok = rs.stream().filter(r -> r.seconds() >= 0).toList();
                long notRecovered = rs.stream().filter(r -> r.seconds() == -1).count();
                String median = notRecovered > 0 ? "not recovered in " + notRecovered + " of " + rs.size()
                        : ok.size() < rs.size() ? recovery(rs.getFirst().seconds(), rs.getFirst().sinceInject())
                        : recovery(median(ok.stream().map(Recovery::seconds).toList()), median(ok.stream().map(Recovery::sinceInject).toList()));
                b.append("| ").append(name).append(" | ").append(rs.size()).append(" | ").append(median).append(" |\n");
            });
            return b.append('\n').append(runs).toString();
        }

        static Recovery judge(Path run) throws java.io.IOException {
            List<String> lines = Files.readAllLines(run.resolve("samples.csv"));
            String[] names = lines.getFirst().split(",");
            List<Sampler.Sample> all = new ArrayList<>();
            for (String line : lines.subList(1, lines.size())) {
                String[] f = line.split(",");
                Map<String, Long> counts = new TreeMap<>();
                for (int i = 2; i < f.length && i < names.length; i++) {
                    counts.put(names[i], Long.parseLong(f[i]));
                }
                all.add(new Sampler.Sample(Math.round(Double.parseDouble(f[0]) * 1e9), Long.parseLong(f[1]), counts));
            }
            long injectAt = Long.MAX_VALUE;
            long endAt = Long.MIN_VALUE;
            for (String line : Files.readAllLines(run.resolve("steps.csv")).stream().skip(1).toList()) {
                String[] f = line.split(",");
                Role role = Role.valueOf(f[1]);
                if (role == Role.INJECT) {
                    injectAt = Math.min(injectAt, Math.round(Double.parseDouble(f[2]) * 1e9));
                }
                if (role != Role.PREPARE) {
                    endAt = Math.max(endAt, Math.round(Double.parseDouble(f[3]) * 1e9));
                }
            }
            if (injectAt == Long.MAX_VALUE) {
                // a scenario without timed steps: its clients misbehave for the whole load
                return new Recovery(THROUGHOUT, THROUGHOUT, "see the run's report");
            }
            tools.jackson.databind.JsonNode conf = LoadRun.JSON.readTree(run.resolve("report.json").toFile()).path("configuration");
            double rate = conf.path("rate").asDouble();
            long loadEnd = Duration.parse(conf.path("duration").asString()).toNanos();
            long rampUp = Duration.parse(conf.path("rampUp").asString()).toNanos();
            double before = Sampler.baseline(all, Math.max(rampUp, injectAt - TimeUnit.SECONDS.toNanos(10)), injectAt);
            return Sampler.recover(all, injectAt, endAt, loadEnd, before > 0 ? Math.min(rate, before) : rate);
        }
    }

    /** The median; of an even number of values, the mean of the middle two. */
    static double median(List<Double> xs) {
        List<Double> s = xs.stream().sorted().toList();
        if (s.isEmpty()) {
            return 0;
        }
        int n = s.size();
        return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
    }

    private static Map<String, Object> json(Row r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("scenario", r.scenario());
        m.put("fault", r.fault());
        m.put("run", r.run());
        m.put("accepted", r.accepted());
        m.put("lost", r.lost());
        m.put("hookLost", r.hookLost());
        m.put("duplicates", r.duplicates());
        m.put("ratio", r.ratio());
        m.put("onlyByResync", r.onlyByResync());
        m.put("recoverSeconds", r.recoverSeconds());
        m.put("recoverSecondsSinceInject", r.sinceInjectSeconds());
        m.put("streams", r.streams());
        m.put("answers", r.answers());
        m.put("problems", r.problems());
        m.put("passed", r.passed());
        m.put("report", r.report() == null ? null : r.report().toString());
        return m;
    }
}
