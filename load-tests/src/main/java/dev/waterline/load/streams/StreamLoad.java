package dev.waterline.load.streams;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import dev.waterline.load.clients.WsLink;
import dev.waterline.load.deployment.ServerProcess;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code waterline-load streams}: the load of durable streams (PROTOCOL.md §6), in four shapes,
 * each reconciled chunk by chunk (every subscriber sees every stored seq of its stream once, in
 * order, and the final state with the producer's last seq):
 * <ul>
 *   <li>{@code single}: one stream, its producer appending one chunk per request back to back
 *       (the next when the last is answered); chunks/s and append→subscriber latency;</li>
 *   <li>{@code many}: {@code --streams} open streams (a list runs each size in turn, e.g.
 *       {@code 2000,5000}), each appended at {@code --rate} chunks/s, with
 *       {@code --subscribers-per-stream} readers each; append→subscriber latency;</li>
 *   <li>{@code replay}: a stream of {@code --chunks} chunks written, then late readers (WebSocket,
 *       then server-sent events) replaying it all; chunks/s;</li>
 *   <li>{@code fanout}: one stream with {@code --subscribers} readers (a list runs each count in
 *       turn), on the last node given; what the readers' node read from PostgreSQL per new chunk,
 *       by its own counters and by PostgreSQL's ({@code pg_stat_user_tables}, when the harness
 *       started the server and so knows its database).</li>
 * </ul>
 * Latency is measured from when a chunk was due (its send time, carried in its data) to when a
 * subscriber read its frame, in this one process, so both ends read one clock. Producers append
 * over the WebSocket ({@code append}), one request per chunk except in {@code replay}; the chats
 * and streams are made over REST first. Producers and readers are users of their own: a user holds
 * one connection.
 * <p>
 * The parts: this class is the command, its plan (the servers, the users, chats and streams of each
 * shape) and the load's pacing; {@link StreamRest} makes the users' tokens, chats and streams and
 * reads the counters; producers keep a {@link ProducedStream} each and append over a
 * {@link StreamConnection}; a {@link StreamReader} is one subscription; {@link StreamVerdict}
 * counts what went wrong and reconciles the readers; {@link Latency} is append→reader.
 */
@Command(name = "streams", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Load of durable streams, reconciled chunk by chunk.")
public final class StreamLoad implements Callable<Integer> {

    enum Mode { single, many, replay, fanout }

    @Option(names = "--mode", required = true, description = "single | many | replay | fanout")
    Mode mode;

    @Option(names = "--urls", split = ",", description = "Base URLs of the nodes (producers use the first, readers the last). Default: http://127.0.0.1:8080.")
    List<String> urls = new ArrayList<>();

    @Option(names = "--start-server", description = "Start the packaged server jar (zero-configuration mode, fresh data); with --nodes 2 a cluster of two.")
    boolean startServer;

    @Option(names = "--nodes", defaultValue = "1", description = "Nodes to start with --start-server. Default: ${DEFAULT-VALUE}")
    int nodes;

    @Option(names = "--server-jar", defaultValue = ServerProcess.DEFAULT_JAR, converter = ServerProcess.JarConverter.class, description = "Default: ${DEFAULT-VALUE}")
    Path serverJar;

    @Option(names = "--server-arg", description = "Extra argument for the started server (repeatable).")
    List<String> serverArgs = new ArrayList<>();

    @Option(names = "--server-jvm-opts", defaultValue = "-Xmx1g -XX:+UseG1GC", description = "Default: ${DEFAULT-VALUE}")
    String serverJvmOpts;

    @Option(names = "--streams", split = ",", defaultValue = "2000", description = "many: open streams (a list runs each in turn). Default: ${DEFAULT-VALUE}")
    List<Integer> streams;

    @Option(names = "--rate", defaultValue = "5", description = "many: chunks per second per stream; fanout: chunks per second. Default: ${DEFAULT-VALUE}")
    double rate;

    @Option(names = "--total-rate", defaultValue = "0", description = "many: chunks per second over all streams instead of --rate"
            + " per stream (so that stream counts compare at one total rate). Default: off")
    double totalRate;

    @Option(names = "--subscribers-per-stream", defaultValue = "2", description = "many: readers of each stream. Default: ${DEFAULT-VALUE}")
    int subscribersPerStream;

    @Option(names = "--subscribers", split = ",", defaultValue = "1000", description = "fanout: readers of the one stream (a list runs each in turn). Default: ${DEFAULT-VALUE}")
    List<Integer> subscribers;

    @Option(names = "--chunks", defaultValue = "100000", description = "replay: chunks of the replayed stream; fanout: chunks appended. Default: ${DEFAULT-VALUE}")
    int chunks;

    @Option(names = "--readers", defaultValue = "3", description = "replay: late readers, one after another, of each kind. Default: ${DEFAULT-VALUE}")
    int readers;

    @Option(names = "--chunk-chars", defaultValue = "32", description = "Characters of each chunk's data. Default: ${DEFAULT-VALUE}")
    int chunkChars;

    @Option(names = "--duration", defaultValue = "PT60S", description = "single, many: how long to append. Default: ${DEFAULT-VALUE}")
    Duration duration;

    @Option(names = "--drain", defaultValue = "PT60S", description = "Longest wait for answers and chunks after the load. Default: ${DEFAULT-VALUE}")
    Duration drain;

    @Option(names = "--out", description = "Folder for report.md and the started server's log. Default: target/load-results/streams-<time>")
    Path out;

    @Option(names = "--cpu-share", description = "single, many: run load-tests/cpu-share.sh over the load's second half and report"
            + " each part's CPU (server, generator, postgres, redis, other).")
    boolean cpuShare;

    @Option(names = "--label", description = "A name for this run in the report.")
    String label;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private final List<ServerProcess> servers = new ArrayList<>();
    private final List<StreamConnection> conns = new CopyOnWriteArrayList<>();
    private final StringBuilder report = new StringBuilder();
    private WsLink.Connector connector;
    private String producerBase;
    private String readerBase;
    private String secret;
    private String run;
    private final StreamVerdict verdict = new StreamVerdict();
    private StreamRest rest;

    @Override
    public Integer call() throws Exception {
        Path dir = out != null ? out
                : Path.of("target", "load-results", "streams-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        Files.createDirectories(dir);
        run = Long.toString(System.currentTimeMillis() % 100_000_000L, 36);
        connector = WsLink.connector(WsLink.Kind.netty);
        Thread pinger = Thread.ofPlatform().daemon().name("stream-load-ping").start(this::pingLoop);
        try {
            startServers(dir);
            rest = new StreamRest(http, run, producerBase, secret);
            report.append("# waterline-load streams: ").append(mode).append(label == null ? "" : " (" + label + ")").append("\n\n")
                    .append("- producers on ").append(producerBase).append(", readers on ").append(readerBase)
                    .append(servers.isEmpty() ? "" : " (started: " + servers.size() + " node(s), JVM `" + serverJvmOpts + "`)")
                    .append("\n- chunk data: ").append(chunkChars).append(" characters\n\n");
            switch (mode) {
                case single -> single();
                case many -> {
                    for (int n : streams) {
                        many(n);
                    }
                }
                case replay -> replay();
                case fanout -> {
                    for (int n : subscribers) {
                        fanout(n);
                    }
                }
            }
        }
        finally {
            pinger.interrupt();
            conns.forEach(c -> c.link.close("done"));
            connector.close();
            for (ServerProcess s : servers) {
                s.close();
            }
        }
        report.append(verdict.failed() ? "\n**RECONCILIATION FAILED**\n" : "\nReconciled: every stored chunk reached every reader once, in order.\n");
        Files.writeString(dir.resolve("report.md"), report);
        System.out.println(report);
        System.out.println("Report in " + dir.toAbsolutePath().resolve("report.md"));
        return verdict.failed() ? 2 : 0;
    }

    private void startServers(Path dir) throws Exception {
        List<String> bases = new ArrayList<>(urls);
        if (startServer) {
            List<String> args = new ArrayList<>(serverArgs);
            // the harness's producers and readers all come from one address and some of them
            // append faster than one person would: the per-connection abuse guards are lifted
            // unless the run sets them (the REST rate and the per-address cap ServerProcess lifts)
            lift(args, "--waterline.gateway.max-sends-per-second", "1000000");
            lift(args, "--waterline.gateway.max-inflight-sends", "100000");
            lift(args, "--waterline.chats.max-members", "5001");
            ServerProcess.Launch launch = new ServerProcess.Launch(serverJar, serverJvmOpts, args, nodes);
            ServerProcess first = ServerProcess.start(launch, dir.resolve("server"));
            servers.add(first);
            for (int n = 2; n <= nodes; n++) {
                servers.add(ServerProcess.peer(launch, dir.resolve("server-" + n), first));
            }
            secret = first.jwtSecret();
            bases = servers.stream().map(ServerProcess::baseUrl).toList();
        }
        if (bases.isEmpty()) {
            bases = List.of("http://127.0.0.1:8080");
        }
        producerBase = bases.getFirst();
        readerBase = bases.getLast();
    }

    private static void lift(List<String> args, String option, String value) {
        if (args.stream().noneMatch(a -> a.startsWith(option + "="))) {
            args.add(option + "=" + value);
        }
    }

    // ---------------------------------------------------------------- single

    private void single() throws Exception {
        String p = rest.user("single-p");
        String[] rs = {rest.user("single-r0"), rest.user("single-r1")};
        String chat = rest.createChat(p, List.of(rs));
        ProducedStream s = new ProducedStream(rest.open(p, chat));
        StreamConnection producer = connect(producerBase, p);
        List<StreamReader> readersOf = new ArrayList<>();
        for (String r : rs) {
            readersOf.add(subscribe(connect(readerBase, r), s, 1));
        }
        verdict.awaitAll(readersOf, rd -> rd.stateSeen, "initial stream frames", drain);
        Latency lat = new Latency();
        readersOf.forEach(rd -> rd.latency = lat);
        long start = System.nanoTime();
        long end = start + duration.toNanos();
        lat.steadyFrom = start + duration.toNanos() / 2;
        StringBuilder cpu = cpuShare(lat.steadyFrom);
        List<Long> perSecond = Collections.synchronizedList(new ArrayList<>());
        AtomicLong second = new AtomicLong(start + 1_000_000_000L);
        AtomicLong inSecond = new AtomicLong();
        java.util.concurrent.CountDownLatch over = new java.util.concurrent.CountDownLatch(1);
        producer.onAppended = (streamId, lastSeq) -> {
            s.acked(lastSeq);
            long now = System.nanoTime();
            if (now >= second.get()) {
                perSecond.add(inSecond.getAndSet(0));
                second.addAndGet(1_000_000_000L);
            }
            inSecond.incrementAndGet();
            if (now < end) {
                producer.append(s, s.next(), now);
            }
            else {
                over.countDown();
            }
        };
        producer.onRefused = (streamId, code, expected, corr) -> {
            verdict.count("append refused: " + code);
            verdict.fail();
            over.countDown();
        };
        producer.append(s, s.next(), System.nanoTime());
        if (!over.await(duration.plus(drain).toMillis(), TimeUnit.MILLISECONDS)) {
            verdict.fail("the producer's last append was not answered within the drain");
        }
        rest.complete(p, s);
        verdict.awaitAll(readersOf, rd -> rd.closedSeen, "final stream frames", drain);
        verdict.reconcile(readersOf);
        List<Long> half = new ArrayList<>(perSecond.subList(perSecond.size() / 2, perSecond.size()));
        Collections.sort(half);
        long median = half.isEmpty() ? 0 : half.get(half.size() / 2);
        report.append("## One stream, one chunk per request, back to back\n\n")
                .append("| chunks stored | chunks/s (median second, second half) | append→reader p50 | p99 | p99.9 | max |\n")
                .append("| ---: | ---: | ---: | ---: | ---: | ---: |\n")
                .append("| ").append(s.ackedSeq.get()).append(" | ").append(median).append(" | ").append(lat.steadyRow()).append(" |\n\n")
                .append("Latency: second half, both readers. ").append(verdict.errorsLine()).append("\n\n").append(cpu(cpu));
        closeAll();
    }

    // ---------------------------------------------------------------- many

    private void many(int n) throws Exception {
        double rate = totalRate > 0 ? totalRate / n : this.rate;
        int perProducer = Math.max(1, (int) Math.floor(150 / rate));
        int producers = (n + perProducer - 1) / perProducer;
        String tag = "many" + n;
        List<String> producerUsers = new ArrayList<>();
        for (int i = 0; i < producers; i++) {
            producerUsers.add(rest.user(tag + "-p" + i));
        }
        List<ProducedStream> all = new ArrayList<>();
        List<List<String>> readerUsers = new ArrayList<>();
        parallel(n, i -> {
            String p = producerUsers.get(i / perProducer);
            List<String> rs = new ArrayList<>();
            for (int j = 0; j < subscribersPerStream; j++) {
                rs.add(rest.user(tag + "-r" + i + "-" + j));
            }
            String chat = rest.createChat(p, rs);
            ProducedStream s = new ProducedStream(rest.open(p, chat));
            synchronized (all) {
                while (all.size() <= i) {
                    all.add(null);
                    readerUsers.add(null);
                }
                all.set(i, s);
                readerUsers.set(i, rs);
            }
        });
        List<StreamConnection> producerConns = new ArrayList<>();
        for (String p : producerUsers) {
            producerConns.add(null);
        }
        parallel(producers, i -> {
            StreamConnection c = connect(producerBase, producerUsers.get(i));
            synchronized (producerConns) {
                producerConns.set(i, c);
            }
        });
        StreamReader[][] rd = new StreamReader[n][subscribersPerStream];
        parallel(n * subscribersPerStream, k -> {
            int i = k / subscribersPerStream;
            int j = k % subscribersPerStream;
            rd[i][j] = subscribe(connect(readerBase, readerUsers.get(i).get(j)), all.get(i), 1);
        });
        List<StreamReader> readersOf = new ArrayList<>();
        for (StreamReader[] r : rd) {
            readersOf.addAll(List.of(r));
        }
        verdict.awaitAll(readersOf, r -> r.stateSeen, "initial stream frames", drain);
        Latency lat = new Latency();
        readersOf.forEach(r -> r.latency = lat);
        Map<String, ProducedStream> byId = new ConcurrentHashMap<>();
        all.forEach(s -> byId.put(s.id, s));
        for (StreamConnection c : producerConns) {
            c.onAppended = (id, lastSeq) -> byId.get(id).acked(lastSeq);
            c.onRefused = (id, code, expected, corr) -> {
                verdict.count("append refused: " + code);
                ProducedStream s = byId.get(id);
                if (s != null) {
                    s.refused(code, expected, corr);
                }
            };
        }
        // the pacer: chunk k of all is due at k / (n·rate) s; it goes to stream k mod n, so each
        // stream gets one every 1/rate s, the streams' phases spread evenly
        double total = n * rate;
        Map<String, Double> countersBefore = rest.scrape(readerBase);
        long start = System.nanoTime();
        long end = start + duration.toNanos();
        lat.steadyFrom = start + duration.toNanos() / 2;
        StringBuilder cpu = cpuShare(lat.steadyFrom);
        long k = 0;
        long lagMaxMicros = 0;
        while (true) {
            long due = start + (long) (k * 1e9 / total);
            if (due >= end) {
                break;
            }
            long now = System.nanoTime();
            if (due > now) {
                LockSupport.parkNanos(due - now);
                continue;
            }
            lagMaxMicros = Math.max(lagMaxMicros, (now - due) / 1000);
            int i = (int) (k % n);
            ProducedStream s = all.get(i);
            producerConns.get(i / perProducer).append(s, s.next(), due);
            k++;
        }
        long deadline = System.nanoTime() + drain.toNanos();
        for (ProducedStream s : all) {
            while (!s.settled() && System.nanoTime() < deadline) {
                synchronized (s) {
                    s.wait(100);
                }
            }
        }
        parallel(n, i -> rest.complete(producerUsers.get(i / perProducer), all.get(i)));
        verdict.awaitAll(readersOf, r -> r.closedSeen, "final stream frames", drain);
        verdict.reconcile(readersOf);
        Map<String, Double> countersAfter = rest.scrape(readerBase);
        long stored = all.stream().mapToLong(s -> s.ackedSeq.get()).sum();
        report.append("## ").append(n).append(" open streams at ").append(rate).append(" chunks/s each, ")
                .append(subscribersPerStream).append(" readers each\n\n")
                .append("- offered ").append(k).append(" appends in ").append(duration.toSeconds()).append(" s (")
                .append(Math.round(k / (double) duration.toSeconds())).append("/s) by ").append(producers)
                .append(" producer connections; stored ").append(stored).append(" chunks; ").append(readersOf.size())
                .append(" reader connections; generator's largest lag behind schedule ").append(lagMaxMicros / 1000).append(" ms\n")
                .append("- the readers' node: ").append(Math.round(delta(countersBefore, countersAfter, "waterline_stream_handover_chunks_total")))
                .append(" chunks handed over in memory, ").append(Math.round(delta(countersBefore, countersAfter, "waterline_stream_tail_reads_total")))
                .append(" tail queries for ").append(Math.round(delta(countersBefore, countersAfter, "waterline_stream_tail_read_chunks_total")))
                .append(" chunks\n\n")
                .append("| streams | append→reader p50 | p99 | p99.9 | max |\n| ---: | ---: | ---: | ---: | ---: |\n")
                .append("| ").append(n).append(" | ").append(lat.steadyRow()).append(" |\n\n")
                .append("Latency: second half of the load, every reader, from when the chunk was due. ").append(verdict.errorsLine()).append("\n\n")
                .append(cpu(cpu));
        closeAll();
    }

    // ---------------------------------------------------------------- replay

    private void replay() throws Exception {
        String p = rest.user("replay-p");
        List<String> rs = new ArrayList<>();
        for (int i = 0; i < readers * 2; i++) {
            rs.add(rest.user("replay-r" + i));
        }
        String chat = rest.createChat(p, rs);
        ProducedStream s = new ProducedStream(rest.open(p, chat));
        StreamConnection producer = connect(producerBase, p);
        Object answered = new Object();
        producer.onAppended = (id, lastSeq) -> {
            s.acked(lastSeq);
            synchronized (answered) {
                answered.notifyAll();
            }
        };
        producer.onRefused = (id, code, expected, corr) -> {
            verdict.count("append refused: " + code);
            verdict.fail();
            synchronized (answered) {
                answered.notifyAll();
            }
        };
        long writeStart = System.nanoTime();
        for (int from = 1; from <= chunks && !verdict.failed(); from += 1000) {
            int to = Math.min(chunks, from + 999);
            producer.appendMany(s, from, to);
            synchronized (answered) {
                while (s.ackedSeq.get() < to && !verdict.failed()) {
                    answered.wait(1000);
                }
            }
        }
        double writeSeconds = (System.nanoTime() - writeStart) / 1e9;
        rest.complete(p, s);
        s.nextSeq = s.ackedSeq.get() + 1;
        List<Double> ws = new ArrayList<>();
        List<Double> sse = new ArrayList<>();
        for (int i = 0; i < readers; i++) {
            StreamConnection c = connect(readerBase, rs.get(i));
            long t0 = System.nanoTime();
            StreamReader r = subscribe(c, s, 1);
            verdict.awaitAll(List.of(r), x -> x.closedSeen, "replay " + i, drain);
            ws.add(s.ackedSeq.get() / ((System.nanoTime() - t0) / 1e9));
            verdict.reconcile(List.of(r));
            c.link.close("done");
            sse.add(sseReplay(rs.get(readers + i), s));
        }
        report.append("## A late reader replays a stream of ").append(s.ackedSeq.get()).append(" chunks\n\n")
                .append("- written in requests of 1000 chunks: ").append(Math.round(s.ackedSeq.get() / writeSeconds)).append(" chunks/s\n\n")
                .append("| reader | chunks/s, each run | median |\n| --- | --- | ---: |\n")
                .append("| WebSocket `subscribe` fromSeq 1 | ").append(list(ws)).append(" | ").append(Math.round(median(ws))).append(" |\n")
                .append("| SSE `events` | ").append(list(sse)).append(" | ").append(Math.round(median(sse))).append(" |\n\n")
                .append("From the subscribe (or the request) to the final `stream` frame (or the end of the response). ")
                .append(verdict.errorsLine()).append("\n\n");
        closeAll();
    }

    private double sseReplay(String reader, ProducedStream s) throws Exception {
        long t0 = System.nanoTime();
        HttpResponse<java.util.stream.Stream<String>> r = http.send(HttpRequest.newBuilder(URI.create(readerBase + "/api/streams/"
                        + s.id + "/events?fromSeq=1&access_token=" + rest.token(reader))).GET().build(), HttpResponse.BodyHandlers.ofLines());
        if (r.statusCode() != 200) {
            throw new IllegalStateException("events answered " + r.statusCode());
        }
        long expect = 1;
        long bad = 0;
        try (java.util.stream.Stream<String> lines = r.body()) {
            for (String line : (Iterable<String>) lines::iterator) {
                if (line.startsWith("id: ")) {
                    if (Long.parseLong(line.substring(4).strip()) != expect) {
                        bad++;
                    }
                    expect++;
                }
            }
        }
        double rate = (expect - 1) / ((System.nanoTime() - t0) / 1e9);
        if (bad > 0 || expect - 1 != s.ackedSeq.get()) {
            verdict.fail("sse replay: " + (expect - 1) + " events, " + bad + " out of order");
        }
        return rate;
    }

    // ---------------------------------------------------------------- fanout

    private void fanout(int n) throws Exception {
        String tag = "fan" + n;
        String p = rest.user(tag + "-p");
        List<String> rs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            rs.add(rest.user(tag + "-r" + i));
        }
        String chat = rest.createChat(p, rs);
        ProducedStream s = new ProducedStream(rest.open(p, chat));
        StreamConnection producer = connect(producerBase, p);
        StreamReader[] rd = new StreamReader[n];
        parallel(n, i -> rd[i] = subscribe(connect(readerBase, rs.get(i)), s, 1));
        List<StreamReader> readersOf = List.of(rd);
        verdict.awaitAll(readersOf, r -> r.stateSeen, "initial stream frames", drain);
        producer.onAppended = (id, lastSeq) -> s.acked(lastSeq);
        producer.onRefused = (id, code, expected, corr) -> {
            verdict.count("append refused: " + code);
            s.refused(code, expected, corr);
        };
        // one chunk first, read by every reader: then each has replayed (the empty stream) and
        // joined the tail, and what is counted from here is the tail's work for new chunks alone
        producer.append(s, s.next(), System.nanoTime());
        verdict.awaitAll(readersOf, r -> r.cursor.next > 1, "the first chunk", drain);
        Latency lat = new Latency();
        readersOf.forEach(r -> r.latency = lat);
        // a backend reports its scans to pg_stat_user_tables up to 10 s after they happened
        // (PostgreSQL 15's idle flush): both snapshots wait that out, when there is a database to ask
        awaitPgStats();
        Map<String, Double> before = rest.scrape(readerBase);
        long pgBefore = pgReads();
        long start = System.nanoTime();
        lat.steadyFrom = start;
        for (int k = 1; k < chunks; k++) {
            long due = start + (long) (k * 1e9 / rate);
            long now = System.nanoTime();
            if (due > now) {
                LockSupport.parkNanos(due - now);
            }
            producer.append(s, s.next(), due);
        }
        long deadline = System.nanoTime() + drain.toNanos();
        while (!s.settled() && System.nanoTime() < deadline) {
            synchronized (s) {
                s.wait(100);
            }
        }
        rest.complete(p, s);
        verdict.awaitAll(readersOf, r -> r.closedSeen, "final stream frames", drain);
        verdict.reconcile(readersOf);
        awaitPgStats();
        Map<String, Double> after = rest.scrape(readerBase);
        long pgAfter = pgReads();
        long stored = s.ackedSeq.get() - 1;
        double tailReads = delta(before, after, "waterline_stream_tail_reads_total");
        double tailChunks = delta(before, after, "waterline_stream_tail_read_chunks_total");
        double handed = delta(before, after, "waterline_stream_handover_chunks_total");
        double frames = delta(before, after, "waterline_stream_chunk_frames_total");
        boolean crossNode = !producerBase.equals(readerBase);
        report.append("## ").append(n).append(" readers on one stream").append(crossNode ? ", on another node than the producer" : "")
                .append("\n\n- ").append(stored).append(" chunks appended at ").append(rate)
                .append("/s, one per request, after a first one every reader had read (not counted)\n\n")
                .append("| readers | chunk frames written | tail queries | chunks the tail read | handed over in memory | PostgreSQL scans of stream_chunks | per new chunk: tail queries | scans | append→reader p50 | p99 | p99.9 | max |\n")
                .append("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
                .append("| ").append(n).append(" | ").append(Math.round(frames)).append(" | ").append(Math.round(tailReads)).append(" | ")
                .append(Math.round(tailChunks)).append(" | ").append(Math.round(handed)).append(" | ")
                .append(pgBefore < 0 ? "n/a" : Long.toString(pgAfter - pgBefore)).append(" | ")
                .append(String.format("%.3f", tailReads / stored)).append(" | ")
                .append(pgBefore < 0 ? "n/a" : String.format("%.3f", (pgAfter - pgBefore) / (double) stored)).append(" | ")
                .append(lat.steadyRow()).append(" |\n\n")
                .append("Counters of the readers' node, the scans PostgreSQL's own (sequential and index scans of every "
                        + "partition, the whole server: the REST completion and the harness are in it too). ")
                .append(verdict.errorsLine()).append("\n\n");
        closeAll();
    }

    /** Starts cpu-share.sh at {@code fromNanos} for the rest of the load (less a second); its table lands in the result. */
    private StringBuilder cpuShare(long fromNanos) {
        StringBuilder into = new StringBuilder();
        if (!cpuShare) {
            return into;
        }
        long seconds = Math.max(1, duration.toSeconds() / 2 - 1);
        Thread.ofVirtual().start(() -> {
            try {
                LockSupport.parkNanos(fromNanos - System.nanoTime());
                Process p = new ProcessBuilder("bash", "load-tests/cpu-share.sh", Long.toString(seconds)).redirectErrorStream(true).start();
                String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                p.waitFor();
                synchronized (into) {
                    into.append("CPU over ").append(seconds).append(" s of the second half (load-tests/cpu-share.sh):\n\n```\n")
                            .append(text).append("```\n\n");
                    into.notifyAll();
                }
            }
            catch (Exception e) {
                synchronized (into) {
                    into.append("cpu-share.sh failed: ").append(e).append("\n\n");
                    into.notifyAll();
                }
            }
        });
        return into;
    }

    /** The CPU table, once cpu-share.sh is done (it ends before the drain does). */
    private String cpu(StringBuilder into) throws InterruptedException {
        if (!cpuShare) {
            return "";
        }
        synchronized (into) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (into.isEmpty() && System.nanoTime() < deadline) {
                into.wait(1000);
            }
            return into.toString();
        }
    }

    private static double delta(Map<String, Double> before, Map<String, Double> after, String name) {
        return after.getOrDefault(name, 0.0) - before.getOrDefault(name, 0.0);
    }

    private void awaitPgStats() throws InterruptedException {
        if (!servers.isEmpty()) {
            TimeUnit.SECONDS.sleep(11);
        }
    }

    /** Sequential plus index scans of the chunk partitions, by PostgreSQL; -1 when the database is not known. */
    private long pgReads() {
        if (servers.isEmpty()) {
            return -1;
        }
        try {
            String pg = servers.getFirst().embeddedPostgres();
            if (pg == null) {
                return -1;
            }
            try (var c = java.sql.DriverManager.getConnection("jdbc:postgresql://" + pg + "/waterline", "postgres", "");
                 var st = c.createStatement()) {
                st.execute("SELECT pg_stat_clear_snapshot()");
                try (var rs = st.executeQuery("SELECT coalesce(sum(coalesce(seq_scan, 0) + coalesce(idx_scan, 0)), 0) "
                        + "FROM pg_stat_user_tables WHERE relname LIKE 'stream_chunks_p%'")) {
                    rs.next();
                    return rs.getLong(1);
                }
            }
        }
        catch (Exception e) {
            verdict.count("pg_stat_user_tables: " + e.getClass().getSimpleName());
            return -1;
        }
    }

    private StreamConnection connect(String base, String user) throws Exception {
        StreamConnection c = new StreamConnection(user, chunkChars, verdict);
        URI uri = URI.create(base.replaceFirst("^http", "ws") + "/ws");
        c.link = connector.connect(uri, rest.token(user), c).get(30, TimeUnit.SECONDS);
        c.welcomed.get(30, TimeUnit.SECONDS);
        conns.add(c);
        return c;
    }

    private StreamReader subscribe(StreamConnection c, ProducedStream s, long fromSeq) {
        StreamReader r = new StreamReader(s, fromSeq);
        c.readers.put(s.id, r);
        c.send("{\"type\":\"subscribe\",\"streamId\":\"" + s.id + "\",\"fromSeq\":" + fromSeq + "}");
        return r;
    }

    private void closeAll() {
        for (StreamConnection c : conns) {
            c.link.close("done");
        }
        conns.clear();
    }

    private void pingLoop() {
        while (!Thread.currentThread().isInterrupted()) {
            try {
                TimeUnit.SECONDS.sleep(5);
            }
            catch (InterruptedException e) {
                return;
            }
            long now = System.nanoTime();
            for (StreamConnection c : conns) {
                if (now - c.lastWrite > TimeUnit.SECONDS.toNanos(10)) {
                    c.send("{\"type\":\"ping\"}");
                }
            }
        }
    }

    interface Step {
        void run(int i) throws Exception;
    }

    /** Runs {@code step} for 0..n-1, 32 at a time, on virtual threads; the first failure is thrown. */
    private static void parallel(int n, Step step) throws Exception {
        Semaphore permits = new Semaphore(32);
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<?>> fs = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int k = i;
                permits.acquire();
                fs.add(pool.submit(() -> {
                    try {
                        step.run(k);
                    }
                    finally {
                        permits.release();
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
        }
    }

    private static double median(List<Double> xs) {
        List<Double> s = new ArrayList<>(xs);
        Collections.sort(s);
        return s.isEmpty() ? 0 : s.get(s.size() / 2);
    }

    private static String list(List<Double> xs) {
        return String.join(", ", xs.stream().map(x -> Long.toString(Math.round(x))).toList());
    }
}
