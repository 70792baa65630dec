package dev.waterline.load.chat;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import dev.waterline.load.clients.Behaviour;
import dev.waterline.load.clients.SimClient;
import dev.waterline.load.clients.WsLink;
import dev.waterline.load.deployment.Deployment;
import dev.waterline.load.deployment.ServerProcess;
import dev.waterline.load.hooks.HookLoad;
import dev.waterline.load.run.LoadConfig;
import dev.waterline.load.run.Report;
import dev.waterline.load.run.ServerMetrics;
import dev.waterline.load.run.Stats;
import dev.waterline.load.run.Timeline;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * One load run, start to verdict.
 *
 * <p>Shape: start the server (or use the given URL); mint tokens and create the chats of the
 * traffic pattern; connect every client; offer sends at the target rate (ramping up linearly),
 * round-robin over the clients, for the duration; stop offering and wait for every send to be
 * answered and deliveries to settle; stop the clients; resync every client from history one
 * last time; read every chat's full history; reconcile and report. Exit code 0 only when nothing
 * accepted was lost.
 */
public final class LoadRun {

    public static final JsonMapper JSON = JsonMapper.builder().build();

    public final LoadConfig cfg;
    public final Stats stats = new Stats();
    final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    /** How many clients may be opening their first connection at once. */
    public final java.util.concurrent.Semaphore firstConnects = new java.util.concurrent.Semaphore(256);
    /** Opens the simulated clients' WebSockets. */
    public final WsLink.Connector connector;
    public final Map<String, Long> sentAt = new ConcurrentHashMap<>();
    public final ConcurrentLinkedQueue<Reconciler.Accepted> accepted = new ConcurrentLinkedQueue<>();
    /** The accepted edits, deletes and reactions (each in {@link #accepted} too, as any entry), for their effects' check. */
    public final ConcurrentLinkedQueue<EntryReconciler.Entry> entries = new ConcurrentLinkedQueue<>();
    /** What the check of the entries' effects found (empty when the run made none). */
    public volatile List<EntryReconciler.Mismatch> entryMismatches = List.of();
    final Map<String, List<String>> members = new ConcurrentHashMap<>();
    public String baseUrl;
    /** The nodes clients connect to (one unless --urls or --nodes): http base URLs and their /ws. */
    public List<String> bases = List.of();
    List<String> wsUrls = List.of();

    private final PrintStream err;
    private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "load-timers");
        t.setDaemon(true);
        return t;
    });
    private final Map<String, List<String>> recipientsCache = new ConcurrentHashMap<>();
    private final List<SimClient> clients = new ArrayList<>();
    private volatile boolean active = true;
    private volatile boolean offering;
    private volatile long stopReadingAtNanos = Long.MAX_VALUE;
    private volatile long secondHalfFromNanos = Long.MAX_VALUE;
    private ServerProcess server;
    private final List<ServerProcess> servers = new ArrayList<>();
    /** Seconds from the end of the drain until the server's outbox was empty; -1 if it was not within the budget. */
    public double outboxDrainSeconds = -1;
    private ServerMetrics serverMetrics;
    /** One hook per chat, when the run has hooks. */
    private HookLoad hooks;
    /** The hooks' report section, and how many accepted messages never reached their hook. */
    public String hookMarkdown = "";
    public long hookLost;

    /** Something a chaos scenario does this far into the offered load (on a thread of its own, in order). */
    public record Timed(Duration at, String what, Action action) {
    }

    public interface Action {
        void run() throws Exception;
    }

    /** A deployment started elsewhere (a chaos run's), whose client URLs this run uses; null: as the configuration says. */
    private final Deployment deployment;
    private final List<Timed> timed;
    /** When each timed action began and ended, in nanoTime terms, by its {@code what}; and any that failed. */
    public final Map<String, long[]> timedAt = new ConcurrentHashMap<>();
    public final List<String> timedFailures = Collections.synchronizedList(new ArrayList<>());
    /** When the load began to be offered, in nanoTime terms; 0 before. */
    public volatile long offerStartNanos;
    /** Runs the timed actions; interrupted and joined when the run ends, so none outlives it. */
    private volatile Thread timedThread;

    public LoadRun(LoadConfig cfg, PrintStream err) {
        this(cfg, err, null, List.of());
    }

    public LoadRun(LoadConfig cfg, PrintStream err, Deployment deployment, List<Timed> timed) {
        this.cfg = cfg;
        this.err = err;
        this.connector = WsLink.connector(cfg.transport());
        this.deployment = deployment;
        this.timed = List.copyOf(timed);
    }

    /** The first node this run started itself ({@code --start-server}), once started; null otherwise. */
    public ServerProcess startedServer() {
        return server;
    }

    /** Whether the load is being offered now (set-up, drain and reconciliation are not). */
    public boolean offering() {
        return offering;
    }

    public boolean active() {
        return active;
    }

    /** When the load's second half (the steady window of the report) begins, in nanoTime terms. */
    public long secondHalfFromNanos() {
        return secondHalfFromNanos;
    }

    public boolean stopReadingNow() {
        return System.nanoTime() >= stopReadingAtNanos;
    }

    public long reconnectEveryNanos() {
        return cfg.reconnectEvery().toNanos();
    }

    public Duration slowAckDelay() {
        return cfg.slowAckDelay();
    }

    public void later(Duration delay, Runnable task) {
        timers.schedule(task, delay.toMillis(), TimeUnit.MILLISECONDS);
    }

    public void accepted(String messageId, String chatId, String sender) {
        stats.accepted.increment();
        List<String> recipients = recipientsCache.computeIfAbsent(chatId + "\u0000" + sender, k ->
                members.get(chatId).stream().filter(m -> !m.equals(sender)).toList());
        accepted.add(new Reconciler.Accepted(messageId, chatId, sender, recipients));
    }

    /** An accepted edit, delete or reaction: an entry as any message ({@link #accepted}), and its effect to check. */
    public void acceptedEntry(SimClient.EntrySpec spec, String messageId, String chatId, String sender, long seq) {
        accepted(messageId, chatId, sender);
        entries.add(switch (spec.kind()) {
            case EDIT -> EntryReconciler.Entry.edit(messageId, chatId, sender, seq, spec.targetId(), spec.body());
            case DELETE -> EntryReconciler.Entry.delete(messageId, chatId, sender, seq, spec.targetId());
            case REACT -> EntryReconciler.Entry.reaction(messageId, chatId, sender, seq, spec.targetId(), spec.emoji(), spec.on());
        });
    }

    /**
     * What the send due now is, from a uniform draw {@code u} in [0, 1): a delete with
     * probability {@code deleteMix}, an edit or a reaction each with half of {@code entryMix},
     * otherwise (null) a message.
     */
    public static SimClient.EntryKind entryKindOf(double u, double entryMix, double deleteMix) {
        if (u < deleteMix) {
            return SimClient.EntryKind.DELETE;
        }
        if (u < deleteMix + entryMix / 2) {
            return SimClient.EntryKind.EDIT;
        }
        if (u < deleteMix + entryMix) {
            return SimClient.EntryKind.REACT;
        }
        return null;
    }

    /** Runs everything; returns the process exit code. */
    public Report execute() throws Exception {
        Instant started = Instant.now();
        String runId = Long.toString(System.currentTimeMillis() % 100_000_000L, 36);
        try {
            if (deployment != null) {
                bases = deployment.clientBases();
            }
            else if (cfg.startServer()) {
                info("starting the server from " + cfg.serverJar() + (cfg.nodes() > 1 ? " (" + cfg.nodes() + " nodes)" : ""));
                server = ServerProcess.start(cfg, cfg.out().resolve("server"));
                servers.add(server);
                for (int n = 2; n <= cfg.nodes(); n++) {
                    servers.add(ServerProcess.peer(cfg, cfg.out().resolve("server-" + n), server));
                }
                bases = servers.stream().map(ServerProcess::baseUrl).toList();
            }
            else if (!cfg.urls().isEmpty()) {
                bases = cfg.urls().stream().map(u -> u.replaceAll("/+$", "")).toList();
            }
            else {
                bases = List.of(cfg.url().replaceAll("/+$", ""));
            }
            if (cfg.killNodeAt() != null && servers.size() < 2) {
                throw new IllegalArgumentException("--kill-node-at needs --start-server with --nodes 2 or more");
            }
            baseUrl = bases.getFirst();
            wsUrls = bases.stream().map(b -> b.replaceFirst("^http", "ws") + "/ws").toList();
            serverMetrics = new ServerMetrics(http, bases);
            if (!"none".equals(cfg.hookKind())) {
                String broker = cfg.hookBroker();
                if (broker == null && "redis".equals(cfg.hookKind()) && server != null) {
                    broker = "redis://" + server.embeddedRedis().replace("127.0.0.1", "localhost") + "/9";
                }
                hooks = new HookLoad(cfg.hookKind(), broker, runId, cfg.hookOutageAt(), cfg.hookOutageFor(), err);
                hooks.start();
            }
            setUp(runId);
            info("%d clients connected; offering %.0f msg/s for %s (%s)".formatted(
                    clients.stream().filter(SimClient::connected).count(), cfg.rate(), cfg.duration(), cfg.pattern()));
            Thread progress = Thread.ofPlatform().daemon().name("load-progress").start(this::progressLoop);
            offering = true;
            try {
                offer();
            }
            finally {
                offering = false;
            }
            if (cfg.typingShare() > 0) {
                info("typing frames written: " + stats.typing.sum());
            }
            drain();
            outboxDrainSeconds = awaitOutboxDrain();
            if (hooks != null) {
                info("waiting for every accepted message to reach its hook");
                hookLost = hooks.awaitDelivered(accepted, cfg.hookDrain());
            }
            active = false;
            progress.interrupt();
            for (SimClient c : clients) {
                c.join();
            }
            info("final resync of every client");
            finalResync();
            Map<String, List<EntryReconciler.Shown>> shown = new ConcurrentHashMap<>();
            Map<String, Set<String>> history = readAllHistory(shown);
            if (!entries.isEmpty()) {
                info("checking the effects of " + entries.size() + " accepted edits, deletes and reactions");
                entryMismatches = EntryReconciler.reconcile(new ArrayList<>(entries), shown, readerOfChat(), fetchDeleted());
            }
            ServerMetrics.Sample end = serverMetrics.sample();
            noteServerSample(end);
            List<Reconciler.Accepted> all = new ArrayList<>(accepted);
            Map<String, Set<String>> held = new HashMap<>();
            Map<String, Map<String, Integer>> counts = new HashMap<>();
            for (SimClient c : clients) {
                held.put(c.userId, c.held);
                counts.put(c.userId, c.receivedCounts);
            }
            Reconciler.Verdict verdict = Reconciler.reconcile(all, history, held, counts);
            if (cfg.pgCeiling() != null) {
                measurePgCeiling();
            }
            Report report = Report.of(this, verdict, end, started, Instant.now());
            report.write(cfg.out());
            if (hooks != null) {
                hookMarkdown = hooks.markdown(hooks.owed(all), hookLost, cfg.duration().dividedBy(2));
                hooks.write(cfg.out());
                java.nio.file.Files.writeString(cfg.out().resolve("report.md"), hookMarkdown, java.nio.file.StandardOpenOption.APPEND);
            }
            if (stats.timeline != null) {
                stats.timeline.write(cfg.out());
            }
            return report;
        }
        finally {
            active = false;
            Thread steps = timedThread;
            if (steps != null) {
                // a step still running (a restart waiting for readiness, say) ends with the run
                steps.interrupt();
                steps.join(TimeUnit.SECONDS.toMillis(60));
            }
            timers.shutdownNow();
            connector.close();
            if (hooks != null) {
                hooks.close();
            }
            for (ServerProcess s : servers) {
                s.close();
            }
        }
    }

    /** PostgreSQL-only msg/s for the same rows, measured after the run on the server's own PostgreSQL; 0 if not measured. */
    public volatile long pgCeilingMsgsPerSecond;

    private void measurePgCeiling() {
        try {
            String address = cfg.pgAddress() != null ? cfg.pgAddress() : server != null ? server.embeddedPostgres() : null;
            if (address == null) {
                info("--pg-ceiling: no PostgreSQL address (give --pg-address for a server this run did not start)");
                return;
            }
            String batch = "256";
            for (String a : cfg.serverArgs()) {
                if (a.startsWith("--waterline.inbound.batch-size=")) {
                    batch = a.substring(a.indexOf('=') + 1);
                }
            }
            String[] hostPort = address.split(":");
            info("measuring the PostgreSQL-only ceiling at " + address + " for " + cfg.pgCeiling());
            Process p = new ProcessBuilder("bash", "load-tests/pg-ceiling.sh", hostPort[0], hostPort[1], batch,
                    Long.toString(cfg.pgCeiling().toSeconds())).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("ceiling_msgs_per_s=(\\d+)").matcher(out);
            if (p.waitFor() == 0 && m.find()) {
                pgCeilingMsgsPerSecond = Long.parseLong(m.group(1));
            }
            else {
                info("--pg-ceiling failed: " + out.strip());
            }
        }
        catch (IOException | RuntimeException e) {
            info("--pg-ceiling failed: " + e);
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void setUp(String runId) throws Exception {
        Random random = new Random(42);
        List<Behaviour> behaviours = new ArrayList<>();
        addFraction(behaviours, Behaviour.SLOW_ACK, cfg.slowAckFraction());
        addFraction(behaviours, Behaviour.NEVER_ACK, cfg.neverAckFraction());
        addFraction(behaviours, Behaviour.STOP_READING, cfg.stopReadingFraction());
        addFraction(behaviours, Behaviour.RECONNECTING, cfg.reconnectFraction());
        while (behaviours.size() < cfg.clients()) {
            behaviours.add(Behaviour.NORMAL);
        }
        Collections.shuffle(behaviours, random);

        List<String> users = new ArrayList<>();
        Map<String, String> tokens = new ConcurrentHashMap<>();
        for (int i = 0; i < cfg.clients(); i++) {
            users.add("lt" + runId + "-" + i);
        }
        try (ExecutorService pool = Executors.newFixedThreadPool(16)) {
            List<Future<?>> fs = new ArrayList<>();
            for (String u : users) {
                fs.add(pool.submit(() -> tokens.put(u, token(u))));
            }
            for (Future<?> f : fs) {
                f.get();
            }
        }
        for (int i = 0; i < users.size(); i++) {
            clients.add(new SimClient(this, users.get(i), tokens.get(users.get(i)), behaviours.get(i), i % nodeCount()));
        }
        List<List<SimClient>> chatsOfClients = new ArrayList<>();
        if (cfg.pattern() != LoadConfig.Pattern.groups) {
            for (int i = 0; i + 1 < clients.size(); i += 2) {
                chatsOfClients.add(List.of(clients.get(i), clients.get(i + 1)));
            }
        }
        if (cfg.pattern() != LoadConfig.Pattern.pairwise) {
            for (int i = 0; i < clients.size(); i += cfg.groupSize()) {
                List<SimClient> group = clients.subList(i, Math.min(clients.size(), i + cfg.groupSize()));
                if (group.size() > 1) {
                    chatsOfClients.add(group);
                }
            }
        }
        try (ExecutorService pool = Executors.newFixedThreadPool(16)) {
            List<Future<?>> fs = new ArrayList<>();
            for (int i = 0; i < chatsOfClients.size(); i++) {
                List<SimClient> chatMembers = chatsOfClients.get(i);
                boolean hooked = hooks != null && hookedChat(i, cfg.hookChats());
                fs.add(pool.submit(() -> createChat(chatMembers, tokens, hooked)));
            }
            for (Future<?> f : fs) {
                f.get();
            }
        }
        for (SimClient c : clients) {
            c.start();
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (System.nanoTime() < deadline && clients.stream().filter(SimClient::connected).count() < clients.size() * 0.98) {
            TimeUnit.MILLISECONDS.sleep(100);
        }
    }

    private void addFraction(List<Behaviour> list, Behaviour b, double fraction) {
        long n = Math.round(fraction * cfg.clients());
        for (long i = 0; i < n && list.size() < cfg.clients(); i++) {
            list.add(b);
        }
    }

    /** Whether chat {@code i} (in the order of creation) is one of the {@code fraction} that get a hook: every n-th one. */
    public static boolean hookedChat(int i, double fraction) {
        if (fraction >= 1) {
            return true;
        }
        if (fraction <= 0) {
            return false;
        }
        return Math.floor((i + 1) * fraction) > Math.floor(i * fraction);
    }

    private void createChat(List<SimClient> chatMembers, Map<String, String> tokens, boolean hooked) {
        SimClient owner = chatMembers.getFirst();
        List<String> others = chatMembers.subList(1, chatMembers.size()).stream().map(c -> c.userId).toList();
        JsonNode chat = post("/api/chats", tokens.get(owner.userId), Map.of("members", others));
        String chatId = chat.get("chatId").asString();
        if (hooked) {
            hooks.hookOfChat.put(chatId, post("/api/chats/" + chatId + "/hooks", tokens.get(owner.userId), hooks.hookBody(chatId))
                    .get("hookId").asString());
        }
        List<String> all = new ArrayList<>();
        for (JsonNode m : chat.get("members")) {
            all.add(m.asString());
        }
        members.put(chatId, all);
        for (SimClient c : chatMembers) {
            synchronized (c) {
                c.chats.add(chatId);
                c.cursors.put(chatId, new SimClient.Cursor());
            }
        }
    }

    private void offer() {
        long start = System.nanoTime();
        long end = start + cfg.duration().toNanos();
        long ramp = Math.max(1, cfg.rampUp().toNanos());
        stopReadingAtNanos = start + cfg.duration().toNanos() / 3;
        secondHalfFromNanos = start + cfg.duration().toNanos() / 2;
        stats.timeline = new Timeline(start, (int) cfg.duration().toSeconds() + 1);
        offerStartNanos = start;
        scheduleTimed(start);
        if (hooks != null) {
            hooks.offering(start, cfg.duration(), this::later);
        }
        boolean stoppedReaders = false;
        long stormAt = cfg.stormAt() == null ? Long.MAX_VALUE : start + cfg.stormAt().toNanos();
        long killAt = cfg.killNodeAt() == null ? Long.MAX_VALUE : start + cfg.killNodeAt().toNanos();
        Random random = new Random(7);
        String body = "x".repeat(Math.max(1, cfg.payloadBytes()));
        boolean withEntries = cfg.entryMix() > 0 || cfg.deleteMix() > 0;
        Set<SimClient> typists = typists(clients, cfg.typingShare());
        long issued = 0;
        int next = 0;
        while (true) {
            long now = System.nanoTime();
            if (now >= end) {
                return;
            }
            if (!stoppedReaders && now >= stopReadingAtNanos) {
                clients.stream().filter(c -> c.behaviour == Behaviour.STOP_READING).forEach(SimClient::stopReading);
                stoppedReaders = true;
            }
            if (now >= killAt) {
                killLastNode();
                killAt = Long.MAX_VALUE;
            }
            if (now >= stormAt) {
                storm();
                stormAt = Long.MAX_VALUE;
            }
            double target = offeredBy(cfg.rate(), ramp / 1e9, (now - start) / 1e9);
            while (issued < (long) target) {
                SimClient c = clients.get(next);
                next = (next + 1) % clients.size();
                issued++;
                stats.offered.increment();
                String chat = chooseChat(c, random);
                SimClient.EntryKind kind = withEntries ? entryKindOf(random.nextDouble(), cfg.entryMix(), cfg.deleteMix()) : null;
                if (chat != null && typists.contains(c)) {
                    c.offerTyping(chat);
                }
                if (chat == null || !(kind == null ? c.offerSend(chat, body) : c.offerEntry(chat, kind, body, random))) {
                    stats.skippedOffline.increment();
                }
            }
            LockSupport.parkNanos(1_000_000);
        }
    }

    /** The clients that type (--typing-share of them), chosen by a fixed seed so that runs compare. */
    static Set<SimClient> typists(List<SimClient> clients, double share) {
        List<SimClient> shuffled = new ArrayList<>(clients);
        Collections.shuffle(shuffled, new Random(11));
        return new HashSet<>(shuffled.subList(0, (int) Math.round(share * clients.size())));
    }

    /**
     * How many sends are due {@code elapsed} seconds into a load of {@code rate} per second that
     * ramps up linearly over {@code rampSeconds}: the integral of the offered rate so far.
     */
    public static double offeredBy(double rate, double rampSeconds, double elapsed) {
        return elapsed < rampSeconds
                ? rate * elapsed * elapsed / (2 * rampSeconds)
                : rate * (rampSeconds / 2 + (elapsed - rampSeconds));
    }

    /** Runs the timed actions in order on a thread of their own, each at its time (none waits for the load). */
    private void scheduleTimed(long start) {
        if (timed.isEmpty()) {
            return;
        }
        timedThread = Thread.ofPlatform().daemon().name("load-chaos").start(() -> {
            for (Timed t : timed) {
                for (long wait = start + t.at().toNanos() - System.nanoTime(); wait > 0 && active;
                     wait = start + t.at().toNanos() - System.nanoTime()) {
                    LockSupport.parkNanos(wait);
                    if (Thread.currentThread().isInterrupted()) {
                        return;
                    }
                }
                if (!active) {
                    return;
                }
                long began = System.nanoTime();
                info("at " + t.at() + ": " + t.what());
                try {
                    t.action().run();
                }
                catch (Exception e) {
                    timedFailures.add(t.what() + ": " + e);
                    info(t.what() + " failed: " + e);
                }
                timedAt.put(t.what(), new long[] {began, System.nanoTime()});
            }
        });
    }

    /** A line for the run's log (a chaos step's outcome, say). */
    public void note(String line) {
        info(line);
    }

    /**
     * Node {@code node}'s connected clients are about to lose it: the time until each has
     * reconnected (elsewhere, or to it restarted) and resynced is recorded as kill recovery.
     */
    public void nodeDies(int node) {
        List<SimClient> hit = clients.stream().filter(c -> c.connected() && c.node() == node).toList();
        long at = System.nanoTime();
        stats.killedClients.addAndGet(hit.size());
        for (SimClient c : hit) {
            c.nodeDies(at);
        }
        info("node " + (node + 1) + " holds " + hit.size() + " clients");
    }

    /**
     * SIGKILL of the last started node: no graceful stop, no last heartbeat, its sockets dropped by
     * the kernel. Its clients fail over to another node and resync; the time from the kill until
     * each of them has done both is recorded.
     */
    private void killLastNode() {
        int node = servers.size() - 1;
        List<SimClient> hit = clients.stream().filter(c -> c.connected() && c.node() == node).toList();
        info("kill -9 of node " + (node + 1) + " (" + servers.get(node).baseUrl() + "), which holds " + hit.size() + " clients");
        long at = System.nanoTime();
        stats.killedClients.set(hit.size());
        for (SimClient c : hit) {
            c.nodeDies(at);
        }
        try {
            servers.get(node).kill();
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** How many nodes clients spread over, and node {@code i}'s base URL and WebSocket URL. */
    public int nodeCount() {
        return bases.size();
    }

    public String base(int node) {
        return bases.get(node);
    }

    public String ws(int node) {
        return wsUrls.get(node);
    }

    /** Drops the first --storm-clients connected clients' connections at once; each reconnects and resyncs. */
    private void storm() {
        storm(cfg.stormClients());
    }

    /** Drops the first {@code n} connected clients' connections at once; each reconnects and resyncs. */
    public void storm(int n) {
        List<SimClient> hit = clients.stream().filter(SimClient::connected).limit(n).toList();
        info("reconnect storm: dropping " + hit.size() + " clients at once");
        long at = System.nanoTime();
        stats.stormClients.set(hit.size());
        for (SimClient c : hit) {
            c.drop(at);
        }
    }

    private String chooseChat(SimClient c, Random random) {
        List<String> chats = c.chats;
        if (chats.isEmpty()) {
            return null;
        }
        if (chats.size() == 1 || cfg.pattern() != LoadConfig.Pattern.mixed) {
            return chats.getFirst();
        }
        return random.nextDouble() < 0.7 ? chats.getFirst() : chats.get(1);
    }

    /** Waits until every send is answered and live deliveries stop growing, within the drain budget. */
    private void drain() throws InterruptedException {
        long deadline = System.nanoTime() + cfg.drain().toNanos();
        long lastDeliveries = -1;
        long stableSince = System.nanoTime();
        while (System.nanoTime() < deadline) {
            long unanswered = clients.stream().mapToLong(SimClient::unansweredCount).sum();
            long d = stats.deliveries.sum();
            if (d != lastDeliveries) {
                lastDeliveries = d;
                stableSince = System.nanoTime();
            }
            if (unanswered == 0 && System.nanoTime() - stableSince > TimeUnit.SECONDS.toNanos(2)) {
                return;
            }
            TimeUnit.MILLISECONDS.sleep(200);
        }
        info("drain budget spent with sends still unanswered: " + clients.stream().mapToLong(SimClient::unansweredCount).sum());
    }

    /** Waits (within {@code --outbox-drain}) for the server's outbox to empty, while clients stay connected. */
    private double awaitOutboxDrain() throws InterruptedException {
        long start = System.nanoTime();
        long deadline = start + cfg.outboxDrain().toNanos();
        while (System.nanoTime() < deadline) {
            ServerMetrics.Sample s = serverMetrics.sample();
            if (s.outboxDepth() == 0) {
                return Math.round((System.nanoTime() - start) / 1e6) / 1000.0;
            }
            TimeUnit.MILLISECONDS.sleep(500);
        }
        info("the outbox was not empty within " + cfg.outboxDrain());
        return -1;
    }

    private void finalResync() throws Exception {
        try (ExecutorService pool = Executors.newFixedThreadPool(16)) {
            List<Future<?>> fs = new ArrayList<>();
            for (SimClient c : clients) {
                fs.add(pool.submit(() -> {
                    c.resyncFrom(baseUrl);
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
        }
    }

    /** The member whose token reads each chat's history: its first. */
    private Map<String, String> readerOfChat() {
        Map<String, String> out = new HashMap<>();
        members.forEach((chat, m) -> out.put(chat, m.getFirst()));
        return out;
    }

    /** The single entry's answer ({@code GET …/messages/{id}}) for the target of every accepted delete, read as its chat's reader. */
    private Map<String, EntryReconciler.Shown> fetchDeleted() throws Exception {
        Map<String, EntryReconciler.Shown> out = new ConcurrentHashMap<>();
        Map<String, String> tokenOfMember = new ConcurrentHashMap<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(16)) {
            List<Future<?>> fs = new ArrayList<>();
            for (EntryReconciler.Entry e : entries) {
                if (!e.kind().equals("delete")) {
                    continue;
                }
                String token = tokenOfMember.computeIfAbsent(members.get(e.chatId()).getFirst(), this::tokenQuietly);
                fs.add(pool.submit(() -> {
                    try {
                        out.put(e.targetId(), EntryReconciler.Shown.of(get("/api/chats/" + e.chatId() + "/messages/" + e.targetId(), token)));
                    }
                    catch (RuntimeException ex) {
                        info("GET of deleted " + e.targetId() + " failed: " + ex.getMessage());
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
        }
        return out;
    }

    private Map<String, Set<String>> readAllHistory(Map<String, List<EntryReconciler.Shown>> shown) throws Exception {
        Map<String, Set<String>> out = new ConcurrentHashMap<>();
        boolean withEntries = cfg.entryMix() > 0 || cfg.deleteMix() > 0;
        Map<String, String> tokenOfMember = new HashMap<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(16)) {
            List<Future<?>> fs = new ArrayList<>();
            for (var e : members.entrySet()) {
                String chat = e.getKey();
                String member = e.getValue().getFirst();
                String token = tokenOfMember.computeIfAbsent(member, this::tokenQuietly);
                fs.add(pool.submit(() -> {
                    Set<String> ids = new HashSet<>();
                    List<EntryReconciler.Shown> entriesShown = new ArrayList<>();
                    for (JsonNode m : history(token, chat, null)) {
                        ids.add(m.get("messageId").asString());
                        if (withEntries) {
                            entriesShown.add(EntryReconciler.Shown.of(m));
                        }
                    }
                    out.put(chat, ids);
                    shown.put(chat, entriesShown);
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
        }
        return out;
    }

    /** Pages a chat's history after {@code since} to the end, as PROTOCOL.md §4 says. */
    public List<JsonNode> history(String token, String chat, String since) {
        return history(baseUrl, token, chat, since);
    }

    /** A chat's history after {@code since}, read from the node at {@code base}. */
    public List<JsonNode> history(String base, String token, String chat, String since) {
        List<JsonNode> all = new ArrayList<>();
        String cursor = since;
        for (int attempt = 0; ; ) {
            try {
                JsonNode page = call(HttpRequest.newBuilder(URI.create(base + "/api/chats/" + chat + "/messages?limit=1000"
                        + (cursor == null ? "" : "&since=" + cursor))).timeout(Duration.ofSeconds(30)).GET(), token);
                for (JsonNode m : page.get("messages")) {
                    all.add(m);
                    cursor = m.get("messageId").asString();
                }
                if (!page.get("hasMore").asBoolean()) {
                    return all;
                }
            }
            catch (RuntimeException e) {
                if (++attempt >= 5) {
                    throw e;
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200L * attempt));
            }
        }
    }

    private String tokenQuietly(String user) {
        try {
            return token(user);
        }
        catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private String token(String user) throws Exception {
        if (cfg.jwtSecret() != null) {
            SignedJWT jwt = new SignedJWT(new JWSHeader(JWSAlgorithm.HS256), new JWTClaimsSet.Builder()
                    .subject(user).expirationTime(java.util.Date.from(Instant.now().plus(Duration.ofDays(1)))).build());
            jwt.sign(new MACSigner(cfg.jwtSecret().getBytes(StandardCharsets.UTF_8)));
            return jwt.serialize();
        }
        return post("/api/dev/tokens", null, Map.of("userId", user)).get("token").asString();
    }

    private JsonNode post(String path, String token, Object body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(baseUrl + path)).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
        return call(b, token);
    }

    private JsonNode get(String path, String token) {
        return call(HttpRequest.newBuilder(URI.create(baseUrl + path)).timeout(Duration.ofSeconds(30)).GET(), token);
    }

    private JsonNode call(HttpRequest.Builder b, String token) {
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        try {
            HttpRequest request = b.build();
            for (int attempt = 1; ; attempt++) {
                HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 429 && attempt < 10) {
                    // over the server's REST rate: wait as it asks, as any client must
                    long seconds = r.headers().firstValueAsLong("Retry-After").orElse(1);
                    TimeUnit.SECONDS.sleep(Math.max(1, Math.min(seconds, 30)));
                    continue;
                }
                if (r.statusCode() / 100 != 2) {
                    throw new IllegalStateException(r.request().uri() + " answered " + r.statusCode() + " " + r.body());
                }
                return JSON.readTree(r.body());
            }
        }
        catch (IOException e) {
            throw new IllegalStateException(e);
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private void progressLoop() {
        long start = System.nanoTime();
        long lastOffered = 0, lastAccepted = 0, lastDeliveries = 0;
        long lastNanos = start;
        long lastScrape = start - cfg.metricsEvery().toNanos();
        ServerMetrics.Sample s = ServerMetrics.Sample.NONE;
        while (active) {
            try {
                TimeUnit.SECONDS.sleep(1);
            }
            catch (InterruptedException e) {
                return;
            }
            // read with its time, before the server's metrics are fetched: a "second" is the time
            // that actually passed since the last reading, never a second plus the fetch
            long now = System.nanoTime();
            long offered = stats.offered.sum(), acc = stats.accepted.sum(), del = stats.deliveries.sum();
            if (offering) {
                stats.acceptedEachSecond.add(Stats.perSecond(acc - lastAccepted, now - lastNanos));
            }
            lastNanos = now;
            // the server's metrics every --metrics-every (a read costs it CPU); between reads the
            // progress line shows the last one, and the started servers' RSS (read from /proc,
            // free for the server) is still taken every second
            if (now - lastScrape >= cfg.metricsEvery().toNanos() - TimeUnit.MILLISECONDS.toNanos(100)) {
                lastScrape = now;
                s = serverMetrics.sample();
                noteServerSample(s);
            }
            else if (server != null) {
                Stats.max(stats.rssMax, startedServersRss());
            }
            if (hooks != null) {
                hooks.sample(http, baseUrl);
            }
            if (!cfg.quiet()) {
                err.printf("[%4ds] offered %5d/s accepted %5d/s deliveries %5d/s | p99 accept %6.1f ms deliver %6.1f ms"
                                + " | reconnects %d | outbox %.0f (oldest %.0fs) heap %.0f MB%n",
                        (System.nanoTime() - start) / 1_000_000_000L, offered - lastOffered, acc - lastAccepted, del - lastDeliveries,
                        stats.acceptLatency.getValueAtPercentile(99) / 1000.0, stats.deliverLatency.getValueAtPercentile(99) / 1000.0,
                        stats.reconnects.sum(), s.outboxDepth(), s.outboxOldestAge(), s.heapUsed() / 1048576.0);
            }
            lastOffered = offered;
            lastAccepted = acc;
            lastDeliveries = del;
        }
    }

    /** The resident memory of the servers this run started, summed (read from /proc: it costs them nothing). */
    private long startedServersRss() {
        return servers.stream().mapToLong(ServerProcess::rssBytes).filter(r -> r > 0).sum();
    }

    private void noteServerSample(ServerMetrics.Sample s) {
        if (!s.counters().isEmpty()) {
            lastCounters = s.counters();
        }
        Stats.max(stats.outboxDepthMax, (long) s.outboxDepth());
        Stats.max(stats.heapMax, (long) s.heapUsed());
        long rss = server != null ? startedServersRss() : (long) s.rss();
        Stats.max(stats.rssMax, rss);
    }

    private volatile Map<String, Double> lastCounters = Map.of();

    public Map<String, Double> serverCounters() {
        return lastCounters;
    }

    long serverRssNow() {
        return server != null ? server.rssBytes() : -1;
    }

    Map<String, List<String>> chats() {
        return members;
    }

    public List<SimClient> clients() {
        return clients;
    }

    private void info(String message) {
        err.println("waterline-load: " + message);
    }
}
