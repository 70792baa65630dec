package dev.waterline.load.run;

import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import dev.waterline.load.bench.ChatsBench;
import dev.waterline.load.bench.SearchBench;
import dev.waterline.load.bench.HistoryBench;
import dev.waterline.load.bench.TransferBench;
import dev.waterline.load.chaos.Chaos;
import dev.waterline.load.chat.LoadRun;
import dev.waterline.load.chat.Walkthrough;
import dev.waterline.load.clients.WsLink;
import dev.waterline.load.deployment.ProxyCli;
import dev.waterline.load.deployment.ServerProcess;
import dev.waterline.load.peers.Peers;
import dev.waterline.load.soak.Soak;
import dev.waterline.load.streams.StreamLoad;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/**
 * {@code waterline-load}: offers a chat load to a Waterline server over its wire contract and
 * reconciles every accepted message. Exit code 0 when nothing was lost, 2 when something was,
 * 1 when the run itself failed. {@code waterline-load walkthrough} checks a new client's first
 * steps instead ({@link Walkthrough}).
 */
@Command(name = "waterline-load", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Load generator with message-by-message reconciliation for Waterline.",
        subcommands = {Walkthrough.class, StreamLoad.class, ProxyCli.class, Chaos.class, Soak.class, Peers.class,
                HistoryBench.class, TransferBench.class, ChatsBench.class, SearchBench.class})
public final class LoadCli implements Callable<Integer> {

    @Option(names = "--url", description = "Server base URL (http://127.0.0.1:8080). Ignored with --start-server.",
            defaultValue = "http://127.0.0.1:8080")
    String url;

    @Option(names = "--start-server", description = "Start the packaged server jar in the zero-configuration mode, with a fresh data folder.")
    boolean startServer;

    @Option(names = "--server-jar", defaultValue = ServerProcess.DEFAULT_JAR, converter = ServerProcess.JarConverter.class, description = "Jar for --start-server. Default: ${DEFAULT-VALUE}")
    Path serverJar;

    @Option(names = "--server-arg", description = "Extra argument for the started server, e.g. --server-arg=--waterline.delivery.lease=20s (repeatable).")
    List<String> serverArgs = new ArrayList<>();

    @Option(names = "--server-jvm-opts", defaultValue = "-Xmx512m -XX:+UseG1GC", description = "JVM options of the started server. Default: ${DEFAULT-VALUE}")
    String serverJvmOpts;

    @Option(names = "--jwt-secret", description = "Mint HS256 tokens with this secret instead of asking /api/dev/tokens.")
    String jwtSecret;

    @Option(names = "--clients", defaultValue = "600", description = "Simulated clients. Default: ${DEFAULT-VALUE}")
    int clients;

    @Option(names = "--rate", defaultValue = "2000", description = "Target sends per second, all clients together. Default: ${DEFAULT-VALUE}")
    double rate;

    @Option(names = "--duration", defaultValue = "PT3M", description = "How long to offer load (ISO-8601, e.g. PT3M). Default: ${DEFAULT-VALUE}")
    Duration duration;

    @Option(names = "--ramp-up", defaultValue = "PT10S", description = "Linear ramp to the target rate. Default: ${DEFAULT-VALUE}")
    Duration rampUp;

    @Option(names = "--drain", defaultValue = "PT60S", description = "Longest wait for answers and deliveries after the load stops. Default: ${DEFAULT-VALUE}")
    Duration drain;

    @Option(names = "--outbox-drain", defaultValue = "PT30S", description = "Longest wait, after the drain, for the server's outbox to empty. Default: ${DEFAULT-VALUE}")
    Duration outboxDrain;

    @Option(names = "--pattern", defaultValue = "pairwise", description = "pairwise | groups | mixed. Default: ${DEFAULT-VALUE}")
    LoadConfig.Pattern pattern;

    @Option(names = "--group-size", defaultValue = "10", description = "Members per group chat (groups, mixed). Default: ${DEFAULT-VALUE}")
    int groupSize;

    @Option(names = "--payload", defaultValue = "100", description = "Message body length in characters. Default: ${DEFAULT-VALUE}")
    int payload;

    @Option(names = "--slow-ack", defaultValue = "0", description = "Fraction of clients that ack late (see --slow-ack-delay).")
    double slowAck;

    @Option(names = "--slow-ack-delay", defaultValue = "PT2S", description = "How late slow clients ack. Default: ${DEFAULT-VALUE}")
    Duration slowAckDelay;

    @Option(names = "--never-ack", defaultValue = "0", description = "Fraction of clients that never ack.")
    double neverAck;

    @Option(names = "--stop-reading", defaultValue = "0", description = "Fraction of clients that stop reading their socket a third of the way in.")
    double stopReading;

    @Option(names = "--reconnecting", defaultValue = "0", description = "Fraction of clients that drop and reconnect now and then.")
    double reconnecting;

    @Option(names = "--reconnect-every", defaultValue = "PT20S", description = "Mean time between drops of reconnecting clients. Default: ${DEFAULT-VALUE}")
    Duration reconnectEvery;

    @Option(names = "--out", description = "Folder for report.json, report.md (and the started server's log). Default: target/load-results/<time>")
    Path out;

    @Option(names = "--label", description = "A name for this run in the report.")
    String label;

    @Option(names = "--quiet", description = "No progress line.")
    boolean quiet;

    @Option(names = "--transport", defaultValue = "netty",
            description = "WebSocket client of the simulated clients: netty (cheap per frame) or jdk (java.net.http). Default: ${DEFAULT-VALUE}")
    WsLink.Kind transport;

    @Option(names = "--storm-at", description = "Reconnect storm: this far into the load (e.g. PT60S), drop --storm-clients"
            + " connections at once; each reconnects and resyncs, and the report gives how long that took.")
    Duration stormAt;

    @Option(names = "--storm-clients", defaultValue = "5000", description = "Clients the reconnect storm drops. Default: ${DEFAULT-VALUE}")
    int stormClients;

    @Option(names = "--pg-ceiling", description = "After the run, measure for this long (e.g. PT20S) the PostgreSQL-only ceiling"
            + " for the same rows with load-tests/pg-ceiling.sh (needs psql and pgbench) and report the ratio to it.")
    Duration pgCeiling;

    @Option(names = "--pg-address", description = "host:port of the server's PostgreSQL for --pg-ceiling. Default: the embedded"
            + " one a --start-server run started.")
    String pgAddress;

    @Option(names = "--urls", split = ",", description = "Several nodes of one deployment (comma-separated base URLs): client i"
            + " connects to node i mod n, so every pair of clients is split across two nodes, and a client whose node does"
            + " not answer fails over to the next. Overrides --url.")
    List<String> urls = new ArrayList<>();

    @Option(names = "--nodes", defaultValue = "1", description = "With --start-server: start this many nodes of one cluster"
            + " (the first hosts the embedded PostgreSQL and Redis, the others use them). Default: ${DEFAULT-VALUE}")
    int nodes;

    @Option(names = "--kill-node-at", description = "This far into the load (e.g. PT60S), kill the last started node with"
            + " SIGKILL (needs --start-server with --nodes 2 or more); its clients fail over to another node and resync.")
    Duration killNodeAt;

    @Option(names = "--hook-kind", defaultValue = "none", description = "One hook per chat of this kind, and its receiver in this"
            + " process: none, http, redis, amqp, mqtt or nats. Default: ${DEFAULT-VALUE}")
    String hookKind;

    @Option(names = "--hook-chats", defaultValue = "1", description = "With --hook-kind: the fraction of chats that get a hook"
            + " (every n-th chat). Default: ${DEFAULT-VALUE}")
    double hookChats;

    @Option(names = "--hook-broker", description = "The broker the hooks publish to and the receiver consumes from (redis://…, amqp://…,"
            + " mqtt://…, nats://…). Default for redis with --start-server: the server's embedded Redis, database 9.")
    String hookBroker;

    @Option(names = "--hook-outage-at", description = "This far into the load, take the http hook receiver down (its port closed) …")
    Duration hookOutageAt;

    @Option(names = "--hook-outage-for", description = "… for this long.")
    Duration hookOutageFor;

    @Option(names = "--hook-drain", defaultValue = "PT5M", description = "Longest wait, after the chat drain, for every accepted"
            + " message to reach its hook. Default: ${DEFAULT-VALUE}")
    Duration hookDrain;

    @Option(names = "--window", defaultValue = "0", description = "A client with this many sends awaiting their answer"
            + " offers no more until one is answered: the send is counted as held back, as a broker client's full window of"
            + " unconfirmed publishes (0: no window; the server's own credits still apply). Default: ${DEFAULT-VALUE}")
    int window;

    @Option(names = "--overload-backoff", defaultValue = "PT0S", description = "A client answered overloaded makes no send for"
            + " this long (doubling while it is refused again, to at most 20 times it, each wait ±25 %%; back to this once a later send is accepted): a"
            + " production client's retry-later. Its sends meanwhile are counted as held back. PT0S: none. Default: ${DEFAULT-VALUE}")
    Duration overloadBackoff;

    @Option(names = "--metrics-every", defaultValue = "PT1S", description = "How often the server's /actuator/prometheus is read"
            + " during the load (outbox depth, heap, counters; each read costs the server CPU, tens of ms at saturation)."
            + " Default: ${DEFAULT-VALUE}")
    Duration metricsEvery;

    @Option(names = "--entry-mix", defaultValue = "0", description = "The fraction of offered sends that are entries instead"
            + " (PROTOCOL.md §9), half edits of one of the client's own accepted messages, half reactions (toggled on and off) to"
            + " one it received; each is acked, delivered, timed and reconciled like a message, and its effect checked in history."
            + " The paper's campaign with entries: 0.10. Default: ${DEFAULT-VALUE}")
    double entryMix;

    @Option(names = "--delete-mix", defaultValue = "0", description = "The fraction of offered sends that are deletes of one of"
            + " the client's own accepted messages (each checked gone everywhere: history, the single message's GET, its"
            + " edits' text). Default: ${DEFAULT-VALUE}")
    double deleteMix;

    @Option(names = "--typing-share", defaultValue = "0", description = "The fraction of the clients that type (PROTOCOL.md §10):"
            + " before each of its sends such a client sends a typing frame, at most one per chat every 3 s (as the JavaScript"
            + " client), only while connected. The awareness campaign: 0.10. Default: ${DEFAULT-VALUE}")
    double typingShare;

    /** The command line, with the walkthrough as a subcommand; {@link Main} runs it. */
    public static CommandLine commandLine() {
        return new CommandLine(new LoadCli()).setCaseInsensitiveEnumValuesAllowed(true).setOverwrittenOptionsAllowed(true);
    }

    @Override
    public Integer call() throws Exception {
        LoadConfig cfg = config();
        LoadRun run = new LoadRun(cfg, System.err);
        Report report = run.execute();
        System.out.println(report.markdown() + run.hookMarkdown);
        System.out.println("Reports in " + cfg.out().toAbsolutePath());
        return report.clean() && run.hookLost == 0 ? 0 : 2;
    }

    public LoadConfig config() {
        Path outDir = out != null ? out
                : Path.of("target", "load-results", LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        if (entryMix < 0 || deleteMix < 0 || entryMix + deleteMix > 1) {
            throw new IllegalArgumentException("--entry-mix and --delete-mix are fractions of the sends, together at most 1");
        }
        if (typingShare < 0 || typingShare > 1) {
            throw new IllegalArgumentException("--typing-share is a fraction of the clients, 0 to 1");
        }
        List<String> args = new ArrayList<>(serverArgs);
        if (!"none".equals(hookKind)) {
            // the receivers and brokers of a load run are on this machine, reached by the name localhost
            args.add("--waterline.hooks.allowed-hosts=localhost");
        }
        return new LoadConfig(url, startServer, serverJar, args, serverJvmOpts, jwtSecret, clients, rate, duration,
                rampUp, drain, outboxDrain, pattern, groupSize, payload, slowAck, slowAckDelay, neverAck, stopReading, reconnecting,
                reconnectEvery, outDir, label, quiet, transport, pgCeiling, pgAddress,
                stormAt, stormClients, List.copyOf(urls), nodes, killNodeAt,
                hookKind, hookChats, hookBroker, hookOutageAt, hookOutageFor, hookDrain, window, overloadBackoff, metricsEvery,
                entryMix, deleteMix, typingShare);
    }

    /** The configuration these command-line arguments give, as {@code waterline-load} would run it (for the suites that run loads). */
    public static LoadConfig configOf(List<String> args) {
        LoadCli cli = new LoadCli();
        new CommandLine(cli).setCaseInsensitiveEnumValuesAllowed(true).setOverwrittenOptionsAllowed(true).parseArgs(args.toArray(String[]::new));
        return cli.config();
    }
}
