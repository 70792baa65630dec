package dev.waterline.load.peers;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.ToDoubleFunction;

import dev.waterline.load.chat.LoadRun;
import dev.waterline.load.deployment.ServerProcess;
import dev.waterline.load.run.CpuMeter;
import dev.waterline.load.run.LoadCli;
import dev.waterline.load.run.LoadConfig;
import dev.waterline.load.run.Report;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code waterline-load peers}: Waterline and the brokers a team would otherwise build chat
 * delivery on, measured by one generator in one invocation (load-tests/peers.sh).
 *
 * <p>Shape: for each round, for each pattern (a number of clients, paired), for each kind of run
 * (saturation: far more offered than any system carries; fixed: the paper's 2,000 msg/s), every
 * system once, one after the other, so that the machine's drift falls on all of them alike. A
 * Waterline run is a {@link LoadRun} on a server it starts (zero-configuration mode: its own
 * PostgreSQL and Redis); a broker's is a {@link PeerRun} on a private broker it starts and stops.
 * Every run is reconciled message by message. CPU time of the system under test (server,
 * PostgreSQL and Redis apart) and of the generator is read over the load's second half and divided
 * by the messages accepted in it. The table (peers.md, peers.json) is written after every run, so a
 * suite cut short keeps what it measured; figures are medians over the rounds.
 */
@Command(name = "peers", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Waterline beside RabbitMQ and NATS JetStream: one generator, the same pairwise load, side by side.")
public final class Peers implements Callable<Integer> {

    @Option(names = "--rounds", defaultValue = "3", description = "Rounds (each runs every system once per pattern and kind). Default: ${DEFAULT-VALUE}")
    int rounds;

    @Option(names = "--patterns", split = ",", defaultValue = "600,100",
            description = "Clients of each pattern, paired (client i writes to its partner). Default: ${DEFAULT-VALUE}")
    List<Integer> patterns;

    @Option(names = "--systems", split = ",",
            defaultValue = "waterline,waterline-async,rabbitmq-classic,rabbitmq-quorum,jetstream",
            description = "waterline (durable commits), waterline-async (synchronous_commit=off, beside jetstream), rabbitmq-classic,"
                    + " rabbitmq-quorum, jetstream. Default: ${DEFAULT-VALUE}")
    List<String> systems;

    @Option(names = "--kinds", split = ",", defaultValue = "saturation,fixed", description = "Kinds of run. Default: ${DEFAULT-VALUE}")
    List<String> kinds;

    @Option(names = "--saturation-rate", defaultValue = "30000", description = "Offered msg/s of a saturation run. Default: ${DEFAULT-VALUE}")
    double saturationRate;

    @Option(names = "--fixed-rate", defaultValue = "2000", description = "Offered msg/s of a fixed run (latency). Default: ${DEFAULT-VALUE}")
    double fixedRate;

    @Option(names = "--duration", defaultValue = "PT40S", description = "Offered load of each run (figures come from its second half). Default: ${DEFAULT-VALUE}")
    Duration duration;

    @Option(names = "--ramp-up", defaultValue = "PT10S", description = "Default: ${DEFAULT-VALUE}")
    Duration rampUp;

    @Option(names = "--payload", defaultValue = "100", description = "Message body bytes. Default: ${DEFAULT-VALUE}")
    int payload;

    @Option(names = "--window", defaultValue = "64",
            description = "Unconfirmed messages per sender (a broker's publishing channel, a Waterline client). Default: ${DEFAULT-VALUE}")
    int window;

    @Option(names = "--prefetch", defaultValue = "100", description = "Unacked deliveries per consumer (RabbitMQ prefetch, JetStream max ack"
            + " pending); Waterline's reapers.max-pending (past it a client is withdrawn) is raised to it. Default: ${DEFAULT-VALUE}")
    int prefetch;

    @Option(names = "--overload-backoff", defaultValue = "PT0.05S",
            description = "A Waterline client answered overloaded holds its sends this long, doubling while refused (a broker"
                    + " holds a saturated publisher by withholding confirms; a refused send frees its window slot at once, so"
                    + " without a back-off a saturated server spends its CPU refusing). Default: ${DEFAULT-VALUE}")
    Duration overloadBackoff;

    @Option(names = "--connections", defaultValue = "4", description = "Broker connections the channels are multiplexed over. Default: ${DEFAULT-VALUE}")
    int connections;

    @Option(names = "--quorum-max-clients", defaultValue = "100",
            description = "Quorum-queue runs with more clients are skipped (600 quorum queues stopped a 2-core node accepting"
                    + " connections). Default: ${DEFAULT-VALUE}")
    int quorumMaxClients;

    @Option(names = "--server-jar", defaultValue = ServerProcess.DEFAULT_JAR, converter = ServerProcess.JarConverter.class, description = "Default: ${DEFAULT-VALUE}")
    Path serverJar;

    @Option(names = "--server-jvm-opts", defaultValue = "-Xmx512m -XX:+UseG1GC", description = "Default: ${DEFAULT-VALUE}")
    String serverJvmOpts;

    @Option(names = "--server-arg", description = "Passed to every Waterline server (repeatable), e.g. --server-arg=--spring.threads.virtual.enabled=false")
    List<String> serverArgs = new ArrayList<>();

    @Option(names = "--metrics-every", defaultValue = "PT10S",
            description = "How often a Waterline run reads the server's metrics during the load (a read costs the server tens of ms"
                    + " at saturation; Prometheus scrapes every 15 s to 1 min). Default: ${DEFAULT-VALUE}")
    Duration metricsEvery;

    @Option(names = "--out", description = "Folder for every run's report and the table. Default: target/load-results/peers-<time>")
    Path out;

    private final PrintStream err = System.err;

    /** One run's figures, whatever the system. CPU in µs per accepted message over the load's second half. */
    record Row(int round, String system, String label, String durability, int clients, String kind, double offeredRate,
               long accepted, long refused, long steadyPerSecond, double p50Ms, double p99Ms,
               Map<String, Double> cpuMicrosPerMessage, long lost, long duplicates, String settings, String note) {
    }

    @Override
    public Integer call() throws Exception {
        Path dir = out != null ? out
                : Path.of("target", "load-results", "peers-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        Files.createDirectories(dir);
        List<Row> rows = new ArrayList<>();
        boolean clean = true;
        for (int round = 1; round <= rounds; round++) {
            for (int clients : patterns) {
                for (String kind : kinds) {
                    double rate = "saturation".equals(kind) ? saturationRate : fixedRate;
                    for (String system : systems) {
                        String name = system + "-" + clients + "-" + kind + "-" + round;
                        err.println("waterline-load peers: " + name + " (" + rate + " msg/s offered)");
                        Row row;
                        try {
                            row = run(round, system, clients, kind, rate, dir.resolve(name));
                        }
                        catch (Exception e) {
                            err.println("waterline-load peers: " + name + " failed: " + e);
                            row = new Row(round, system, system, "", clients, kind, rate, 0, 0, 0, 0, 0, Map.of(), 0, 0, "",
                                    "failed: " + e.getMessage());
                            clean = false;
                        }
                        clean &= row.lost() == 0;
                        rows.add(row);
                        err.println("waterline-load peers: " + name + ": " + row);
                        write(dir, rows);
                    }
                }
            }
        }
        System.out.println(markdown(rows));
        System.out.println("Table and reports in " + dir.toAbsolutePath());
        return clean ? 0 : 2;
    }

    private Row run(int round, String system, int clients, String kind, double rate, Path dir) throws Exception {
        if (system.startsWith("waterline")) {
            return waterline(round, system, clients, kind, rate, dir);
        }
        if (system.equals("rabbitmq-quorum") && clients > quorumMaxClients) {
            return new Row(round, system, "RabbitMQ quorum queues", "fsync before confirm", clients, kind, rate, 0, 0, 0, 0, 0,
                    Map.of(), 0, 0, "", "skipped: more than --quorum-max-clients " + quorumMaxClients
                    + " (600 quorum queues stopped a 2-core node accepting connections)");
        }
        PeerSystem peer = switch (system) {
            case "rabbitmq-classic" -> new RabbitPeer(false, prefetch, connections, window);
            case "rabbitmq-quorum" -> new RabbitPeer(true, prefetch, connections, window);
            case "jetstream" -> new JetStreamPeer(prefetch, connections, window);
            default -> throw new IllegalArgumentException("unknown system " + system);
        };
        PeerRun.Result r = new PeerRun(peer, new PeerRun.Config(clients, rate, duration, rampUp, Duration.ofSeconds(120), payload), err)
                .execute(dir);
        Map<String, Double> cpu = perMessage(r.cpuSeconds(), r.windowMessages());
        return new Row(round, system, r.label(), r.durability(), clients, kind, rate, r.confirmed(), r.refused(), r.steadyPerSecond(),
                r.deliverSteadyMs().getOrDefault("p50", 0.0), r.deliverSteadyMs().getOrDefault("p99", 0.0), cpu,
                r.lost(), r.duplicates(), r.settings().toString(),
                r.misrouted() > 0 || r.failed() > 0 ? r.failed() + " failed, " + r.misrouted() + " misrouted" : "");
    }

    private Row waterline(int round, String system, int clients, String kind, double rate, Path dir) throws Exception {
        boolean async = system.equals("waterline-async");
        List<String> args = new ArrayList<>(List.of("--start-server", "--server-jar", serverJar.toString(),
                "--server-jvm-opts", serverJvmOpts, "--clients", Integer.toString(clients), "--rate", Double.toString(rate),
                "--duration", duration.toString(), "--ramp-up", rampUp.toString(), "--payload", Integer.toString(payload),
                "--window", Integer.toString(window), "--overload-backoff", overloadBackoff.toString(),
                "--metrics-every", metricsEvery.toString(), "--quiet", "--out", dir.toString(), "--label", system + " " + clients + " " + kind));
        List<String> serverSettings = serverArgsFor(clients, async);
        serverSettings.forEach(a -> args.add("--server-arg=" + a));
        LoadConfig cfg = LoadCli.configOf(args);
        CpuMeter.Sample[] cpuWindow = new CpuMeter.Sample[2];
        long[] accepted = new long[2];
        LoadRun[] holder = new LoadRun[1];
        CpuMeter[] meter = new CpuMeter[1];
        List<LoadRun.Timed> timed = List.of(
                new LoadRun.Timed(duration.dividedBy(2), "CPU window opens", () -> {
                    ServerProcess server = holder[0].startedServer();
                    long pid = server.pid();
                    meter[0] = new CpuMeter(List.of(
                            CpuMeter.pid("server", pid),
                            // as the server names it: absolute and normalized (EmbeddedServers)
                            CpuMeter.mentioning("postgres", server.dataDir().toAbsolutePath().normalize().resolve("postgres").toString()),
                            new CpuMeter.Part("redis", p -> p.ppid() == pid && p.cmdline().contains("redis-server")),
                            CpuMeter.pid("generator", ProcessHandle.current().pid())));
                    cpuWindow[0] = meter[0].sample();
                    accepted[0] = holder[0].stats.accepted.sum();
                }),
                new LoadRun.Timed(duration.minusMillis(500), "CPU window closes", () -> {
                    cpuWindow[1] = meter[0].sample();
                    accepted[1] = holder[0].stats.accepted.sum();
                }));
        LoadRun run = new LoadRun(cfg, err, null, timed);
        holder[0] = run;
        Report report = run.execute();
        Map<String, Double> cpu = cpuWindow[1] == null ? Map.of() : perMessage(cpuWindow[1].secondsSince(cpuWindow[0]), accepted[1] - accepted[0]);
        long refused = report.heldByWindow() + report.rejectedByCode().values().stream().mapToLong(Long::longValue).sum();
        String label = async ? "Waterline, synchronous_commit=off" : "Waterline";
        String durability = async ? "commit not fsynced (benchmark only)" : "fsync before accepted";
        return new Row(round, system, label, durability, clients, kind, rate, report.accepted(), refused,
                report.acceptedSteadyPerSecond(), report.deliverLatencySteadyMs().getOrDefault("p50", 0.0),
                report.deliverLatencySteadyMs().getOrDefault("p99", 0.0), cpu, report.lost(), report.duplicatesSeen(),
                "window " + window + " per client, back-off " + overloadBackoff + " on overloaded, server " + cfg.serverJvmOpts()
                        + " " + String.join(" ", serverSettings),
                "ratio " + report.deliveriesPerExpected() + (refused > 0 ? ", refused " + report.rejectedByCode() : ""));
    }

    /**
     * The Waterline server's arguments for a pattern: --server-arg's, then each of the settings
     * below that they do not give themselves.
     * <ul>
     *   <li>send rate per connection unbounded: every client offers rate/clients msg/s, far above
     *       the per-connection default at saturation;</li>
     *   <li>{@code reapers.max-pending} raised to the brokers' prefetch, so that a receiver a
     *       saturated generator is slow to ack for is not withdrawn (4008) and made to resync. Not
     *       the same mechanism: a broker stops delivering past its prefetch, Waterline withdraws
     *       the client (the default 20 withdrew 291 clients in a 30 s saturation run at 100
     *       clients, each then resyncing and sending its window again);</li>
     *   <li>an inbound queue with room for every client's whole window ({@link #queueFor}), as a
     *       broker holds every unconfirmed publish: a saturated sender is held back by its window,
     *       not refused (the default 8,000 refuses most of 600 clients' 38,400 and spends its CPU
     *       on it; docs/lab/2026-12-02-peers.md, "Like for like");</li>
     *   <li>for waterline-async, {@code synchronous_commit=off} on the server's sessions.</li>
     * </ul>
     */
    List<String> serverArgsFor(int clients, boolean async) {
        List<String> out = new ArrayList<>(serverArgs);
        Map<String, String> defaults = new LinkedHashMap<>();
        defaults.put("waterline.gateway.max-sends-per-second", "1000000");
        defaults.put("waterline.reapers.max-pending", Integer.toString(prefetch));
        defaults.put("waterline.inbound.queue-size", Integer.toString(queueFor(clients)));
        if (async) {
            defaults.put("spring.datasource.hikari.connection-init-sql",
                    "SELECT set_config('synchronous_commit', 'off', false) UNION ALL SELECT set_config('jit', 'off', false)");
        }
        defaults.forEach((k, v) -> {
            if (serverArgs.stream().noneMatch(a -> a.startsWith("--" + k + "="))) {
                out.add("--" + k + "=" + v);
            }
        });
        return out;
    }

    /**
     * Waterline's inbound queue for a pattern (assuming the default two writers): every client's whole window in each writer's share
     * (the share a chat's sends go to is picked by the chat's id, so one share may get more than its
     * half), never below the default 8,000.
     */
    int queueFor(int clients) {
        return Math.max(8000, clients * window * 2);
    }

    /** CPU seconds by part → µs per message; no figure (an empty map) when no message was accepted in the window or a part has none. */
    static Map<String, Double> perMessage(Map<String, Double> seconds, long messages) {
        Map<String, Double> out = new LinkedHashMap<>();
        if (messages <= 0 || seconds.values().stream().anyMatch(v -> v.isNaN())) {
            return out;   // nothing accepted, or the meter could not tell (CpuMeter.Sample#secondsSince)
        }
        for (Map.Entry<String, Double> e : seconds.entrySet()) {
            out.put(e.getKey(), Math.round(e.getValue() * 1e7 / messages) / 10.0);
        }
        return out;
    }

    /** Whether a row measured anything (not skipped, not failed). */
    static boolean measured(Row r) {
        return !r.note().startsWith("skipped") && !r.note().startsWith("failed");
    }

    private void write(Path dir, List<Row> rows) throws Exception {
        Files.writeString(dir.resolve("peers.md"), markdown(rows));
        Files.writeString(dir.resolve("peers.json"),
                JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build().writeValueAsString(rows));
    }

    /** Every run, then the medians by pattern and system. */
    static String markdown(List<Row> rows) {
        StringBuilder b = new StringBuilder("# Peers, side by side\n\n## Medians\n\n");
        b.append("| clients | system | durability | saturated msg/s (runs) | p50 / p99 at the fixed rate (ms) | CPU µs/msg: system | of which PostgreSQL / Redis | generator | lost (worst) | duplicates (median) |\n");
        b.append("|---|---|---|---|---|---|---|---|---|---|\n");
        Map<String, List<Row>> groups = new LinkedHashMap<>();
        for (Row r : rows) {
            groups.computeIfAbsent(r.clients() + "\u0000" + r.system(), k -> new ArrayList<>()).add(r);
        }
        for (List<Row> g : groups.values()) {
            List<Row> ran = g.stream().filter(Peers::measured).toList();
            List<Row> sat = ran.stream().filter(r -> r.kind().equals("saturation")).toList();
            List<Row> fixed = ran.stream().filter(r -> r.kind().equals("fixed") && r.accepted() > 0).toList();
            Row first = ran.isEmpty() ? g.getFirst() : ran.getFirst();
            if (sat.isEmpty() && fixed.isEmpty()) {
                b.append("| %d | %s | %s | %s | | | | | | |\n".formatted(first.clients(), first.label(), first.durability(), first.note()));
                continue;
            }
            // a run without a CPU window has no figure (NaN), not 0
            ToDoubleFunction<Row> system = r -> r.cpuMicrosPerMessage().isEmpty() ? Double.NaN
                    : r.cpuMicrosPerMessage().entrySet().stream().filter(e -> !e.getKey().equals("generator"))
                    .mapToDouble(Map.Entry::getValue).sum();
            b.append("| %d | %s | %s | %s (%s) | %s / %s | %s | %s / %s | %s | %d | %s |\n".formatted(
                    first.clients(), first.label(), first.durability(),
                    fmt(median(sat, r -> r.steadyPerSecond())), String.join(", ", sat.stream().map(r -> Long.toString(r.steadyPerSecond())).toList()),
                    fmt(median(fixed, Row::p50Ms)), fmt(median(fixed, Row::p99Ms)),
                    fmt(median(sat, system)),
                    fmt(median(sat, r -> r.cpuMicrosPerMessage().getOrDefault("postgres", Double.NaN))),
                    fmt(median(sat, r -> r.cpuMicrosPerMessage().getOrDefault("redis", Double.NaN))),
                    fmt(median(sat, r -> r.cpuMicrosPerMessage().getOrDefault("generator", Double.NaN))),
                    ran.stream().mapToLong(Row::lost).max().orElse(0),
                    fmt(median(ran, r -> r.duplicates()))));
        }
        b.append("\n## Every run\n\n| round | clients | kind | system | offered msg/s | accepted | refused | steady msg/s | p50 / p99 (ms, second half) | CPU µs/msg by part | lost | duplicates | settings | note |\n");
        b.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (Row r : rows) {
            b.append("| %d | %d | %s | %s | %.0f | %d | %d | %d | %s / %s | %s | %d | %d | %s | %s |\n".formatted(r.round(), r.clients(), r.kind(),
                    r.label(), r.offeredRate(), r.accepted(), r.refused(), r.steadyPerSecond(), fmt(r.p50Ms()), fmt(r.p99Ms()),
                    r.cpuMicrosPerMessage(), r.lost(), r.duplicates(), r.settings(), r.note()));
        }
        return b.toString();
    }

    /** The median of the rows' figures that exist (NaN is none); of an even count, the mean of the middle two. NaN for none. */
    static double median(List<Row> rows, ToDoubleFunction<Row> f) {
        List<Double> v = new ArrayList<>(rows.stream().mapToDouble(f).filter(d -> !Double.isNaN(d)).boxed().toList());
        if (v.isEmpty()) {
            return Double.NaN;
        }
        Collections.sort(v);
        int n = v.size();
        return n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
    }

    private static String fmt(double v) {
        if (Double.isNaN(v)) {
            return "–";
        }
        return v == Math.rint(v) && Math.abs(v) >= 100 ? Long.toString((long) v) : String.format("%.1f", v);
    }
}
