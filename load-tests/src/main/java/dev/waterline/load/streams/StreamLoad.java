package dev.waterline.load.streams;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
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

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import dev.waterline.load.clients.SeqCursor;
import dev.waterline.load.clients.WsLink;
import dev.waterline.load.deployment.ServerProcess;
import dev.waterline.load.run.Report;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

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
 */
@Command(name = "streams", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Load of durable streams, reconciled chunk by chunk.")
public final class StreamLoad implements Callable<Integer> {

    enum Mode { single, many, replay, fanout }

    private static final JsonMapper JSON = JsonMapper.builder().build();

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
    private final List<Conn> conns = new CopyOnWriteArrayList<>();
    private final StringBuilder report = new StringBuilder();
    private WsLink.Connector connector;
    private String producerBase;
    private String readerBase;
    private String secret;
    private String run;
    private volatile boolean failed;

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
        report.append(failed ? "\n**RECONCILIATION FAILED**\n" : "\nReconciled: every stored chunk reached every reader once, in order.\n");
        Files.writeString(dir.resolve("report.md"), report);
        System.out.println(report);
        System.out.println("Report in " + dir.toAbsolutePath().resolve("report.md"));
        return failed ? 2 : 0;
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
        String p = user("single-p");
        String[] rs = {user("single-r0"), user("single-r1")};
        String chat = createChat(p, List.of(rs));
        Stream s = new Stream(open(p, chat));
        Conn producer = connect(producerBase, p);
        List<Reader> readersOf = new ArrayList<>();
        for (String r : rs) {
            readersOf.add(subscribe(connect(readerBase, r), s, 1));
        }
        awaitAll(readersOf, rd -> rd.stateSeen, "initial stream frames");
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
            count("append refused: " + code);
            failed = true;
            over.countDown();
        };
        producer.append(s, s.next(), System.nanoTime());
        if (!over.await(duration.plus(drain).toMillis(), TimeUnit.MILLISECONDS)) {
            failed = true;
            count("the producer's last append was not answered within the drain");
        }
        complete(p, s);
        awaitAll(readersOf, rd -> rd.closedSeen, "final stream frames");
        reconcile(readersOf);
        List<Long> half = new ArrayList<>(perSecond.subList(perSecond.size() / 2, perSecond.size()));
        Collections.sort(half);
        long median = half.isEmpty() ? 0 : half.get(half.size() / 2);
        report.append("## One stream, one chunk per request, back to back\n\n")
                .append("| chunks stored | chunks/s (median second, second half) | append→reader p50 | p99 | p99.9 | max |\n")
                .append("| ---: | ---: | ---: | ---: | ---: | ---: |\n")
                .append("| ").append(s.ackedSeq.get()).append(" | ").append(median).append(" | ").append(lat.steadyRow()).append(" |\n\n")
                .append("Latency: second half, both readers. ").append(errorsLine()).append("\n\n").append(cpu(cpu));
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
            producerUsers.add(user(tag + "-p" + i));
        }
        List<Stream> all = new ArrayList<>();
        List<List<String>> readerUsers = new ArrayList<>();
        parallel(n, i -> {
            String p = producerUsers.get(i / perProducer);
            List<String> rs = new ArrayList<>();
            for (int j = 0; j < subscribersPerStream; j++) {
                rs.add(user(tag + "-r" + i + "-" + j));
            }
            String chat = createChat(p, rs);
            Stream s = new Stream(open(p, chat));
            synchronized (all) {
                while (all.size() <= i) {
                    all.add(null);
                    readerUsers.add(null);
                }
                all.set(i, s);
                readerUsers.set(i, rs);
            }
        });
        List<Conn> producerConns = new ArrayList<>();
        for (String p : producerUsers) {
            producerConns.add(null);
        }
        parallel(producers, i -> {
            Conn c = connect(producerBase, producerUsers.get(i));
            synchronized (producerConns) {
                producerConns.set(i, c);
            }
        });
        Reader[][] rd = new Reader[n][subscribersPerStream];
        parallel(n * subscribersPerStream, k -> {
            int i = k / subscribersPerStream;
            int j = k % subscribersPerStream;
            rd[i][j] = subscribe(connect(readerBase, readerUsers.get(i).get(j)), all.get(i), 1);
        });
        List<Reader> readersOf = new ArrayList<>();
        for (Reader[] r : rd) {
            readersOf.addAll(List.of(r));
        }
        awaitAll(readersOf, r -> r.stateSeen, "initial stream frames");
        Latency lat = new Latency();
        readersOf.forEach(r -> r.latency = lat);
        Map<String, Stream> byId = new ConcurrentHashMap<>();
        all.forEach(s -> byId.put(s.id, s));
        for (Conn c : producerConns) {
            c.onAppended = (id, lastSeq) -> byId.get(id).acked(lastSeq);
            c.onRefused = (id, code, expected, corr) -> {
                count("append refused: " + code);
                Stream s = byId.get(id);
                if (s != null) {
                    s.refused(code, expected, corr);
                }
            };
        }
        // the pacer: chunk k of all is due at k / (n·rate) s; it goes to stream k mod n, so each
        // stream gets one every 1/rate s, the streams' phases spread evenly
        double total = n * rate;
        Map<String, Double> countersBefore = scrape(readerBase);
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
            Stream s = all.get(i);
            producerConns.get(i / perProducer).append(s, s.next(), due);
            k++;
        }
        long deadline = System.nanoTime() + drain.toNanos();
        for (Stream s : all) {
            while (!s.settled() && System.nanoTime() < deadline) {
                synchronized (s) {
                    s.wait(100);
                }
            }
        }
        parallel(n, i -> complete(producerUsers.get(i / perProducer), all.get(i)));
        awaitAll(readersOf, r -> r.closedSeen, "final stream frames");
        reconcile(readersOf);
        Map<String, Double> countersAfter = scrape(readerBase);
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
                .append("Latency: second half of the load, every reader, from when the chunk was due. ").append(errorsLine()).append("\n\n")
                .append(cpu(cpu));
        closeAll();
    }

    // ---------------------------------------------------------------- replay

    private void replay() throws Exception {
        String p = user("replay-p");
        List<String> rs = new ArrayList<>();
        for (int i = 0; i < readers * 2; i++) {
            rs.add(user("replay-r" + i));
        }
        String chat = createChat(p, rs);
        Stream s = new Stream(open(p, chat));
        Conn producer = connect(producerBase, p);
        Object answered = new Object();
        producer.onAppended = (id, lastSeq) -> {
            s.acked(lastSeq);
            synchronized (answered) {
                answered.notifyAll();
            }
        };
        producer.onRefused = (id, code, expected, corr) -> {
            count("append refused: " + code);
            failed = true;
            synchronized (answered) {
                answered.notifyAll();
            }
        };
        long writeStart = System.nanoTime();
        for (int from = 1; from <= chunks && !failed; from += 1000) {
            int to = Math.min(chunks, from + 999);
            producer.appendMany(s, from, to);
            synchronized (answered) {
                while (s.ackedSeq.get() < to && !failed) {
                    answered.wait(1000);
                }
            }
        }
        double writeSeconds = (System.nanoTime() - writeStart) / 1e9;
        complete(p, s);
        s.nextSeq = s.ackedSeq.get() + 1;
        List<Double> ws = new ArrayList<>();
        List<Double> sse = new ArrayList<>();
        for (int i = 0; i < readers; i++) {
            Conn c = connect(readerBase, rs.get(i));
            long t0 = System.nanoTime();
            Reader r = subscribe(c, s, 1);
            awaitAll(List.of(r), x -> x.closedSeen, "replay " + i);
            ws.add(s.ackedSeq.get() / ((System.nanoTime() - t0) / 1e9));
            reconcile(List.of(r));
            c.link.close("done");
            sse.add(sseReplay(rs.get(readers + i), s));
        }
        report.append("## A late reader replays a stream of ").append(s.ackedSeq.get()).append(" chunks\n\n")
                .append("- written in requests of 1000 chunks: ").append(Math.round(s.ackedSeq.get() / writeSeconds)).append(" chunks/s\n\n")
                .append("| reader | chunks/s, each run | median |\n| --- | --- | ---: |\n")
                .append("| WebSocket `subscribe` fromSeq 1 | ").append(list(ws)).append(" | ").append(Math.round(median(ws))).append(" |\n")
                .append("| SSE `events` | ").append(list(sse)).append(" | ").append(Math.round(median(sse))).append(" |\n\n")
                .append("From the subscribe (or the request) to the final `stream` frame (or the end of the response). ")
                .append(errorsLine()).append("\n\n");
        closeAll();
    }

    private double sseReplay(String reader, Stream s) throws Exception {
        long t0 = System.nanoTime();
        HttpResponse<java.util.stream.Stream<String>> r = http.send(HttpRequest.newBuilder(URI.create(readerBase + "/api/streams/"
                        + s.id + "/events?fromSeq=1&access_token=" + token(reader))).GET().build(), HttpResponse.BodyHandlers.ofLines());
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
            failed = true;
            count("sse replay: " + (expect - 1) + " events, " + bad + " out of order");
        }
        return rate;
    }

    // ---------------------------------------------------------------- fanout

    private void fanout(int n) throws Exception {
        String tag = "fan" + n;
        String p = user(tag + "-p");
        List<String> rs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            rs.add(user(tag + "-r" + i));
        }
        String chat = createChat(p, rs);
        Stream s = new Stream(open(p, chat));
        Conn producer = connect(producerBase, p);
        Reader[] rd = new Reader[n];
        parallel(n, i -> rd[i] = subscribe(connect(readerBase, rs.get(i)), s, 1));
        List<Reader> readersOf = List.of(rd);
        awaitAll(readersOf, r -> r.stateSeen, "initial stream frames");
        producer.onAppended = (id, lastSeq) -> s.acked(lastSeq);
        producer.onRefused = (id, code, expected, corr) -> {
            count("append refused: " + code);
            s.refused(code, expected, corr);
        };
        // one chunk first, read by every reader: then each has replayed (the empty stream) and
        // joined the tail, and what is counted from here is the tail's work for new chunks alone
        producer.append(s, s.next(), System.nanoTime());
        awaitAll(readersOf, r -> r.cursor.next > 1, "the first chunk");
        Latency lat = new Latency();
        readersOf.forEach(r -> r.latency = lat);
        // a backend reports its scans to pg_stat_user_tables up to 10 s after they happened
        // (PostgreSQL 15's idle flush): both snapshots wait that out, when there is a database to ask
        awaitPgStats();
        Map<String, Double> before = scrape(readerBase);
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
        complete(p, s);
        awaitAll(readersOf, r -> r.closedSeen, "final stream frames");
        reconcile(readersOf);
        awaitPgStats();
        Map<String, Double> after = scrape(readerBase);
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
                .append(errorsLine()).append("\n\n");
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

    private Map<String, Double> scrape(String base) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base + "/actuator/prometheus")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        Map<String, Double> sums = new LinkedHashMap<>();
        for (String line : r.body().split("\n")) {
            if (line.isEmpty() || line.charAt(0) == '#') {
                continue;
            }
            int sp = line.lastIndexOf(' ');
            String key = line.substring(0, sp);
            String name = key.contains("{") ? key.substring(0, key.indexOf('{')) : key;
            sums.merge(name, Double.parseDouble(line.substring(sp + 1)), Double::sum);
        }
        return sums;
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
            count("pg_stat_user_tables: " + e.getClass().getSimpleName());
            return -1;
        }
    }

    // ---------------------------------------------------------------- the parts

    /** A stream as its producer keeps it: the next seq to send and the last one answered. */
    static final class Stream {
        final String id;
        long nextSeq = 1;
        final AtomicLong ackedSeq = new AtomicLong();

        Stream(String id) {
            this.id = id;
        }

        /** The seq to send: one after the last answered at least (a late gap answer may name one stored since). */
        synchronized long next() {
            nextSeq = Math.max(nextSeq, ackedSeq.get() + 1);
            return nextSeq++;
        }

        /** Due times of the seqs sent and not yet answered: a seq sent again carries the same data, as a producer's retry must. */
        final java.util.concurrent.ConcurrentSkipListMap<Long, Long> unanswered = new java.util.concurrent.ConcurrentSkipListMap<>();

        long dueOf(long seq, long due) {
            Long first = unanswered.putIfAbsent(seq, due);
            return first == null ? due : first;
        }

        void acked(long lastSeq) {
            ackedSeq.accumulateAndGet(lastSeq, Math::max);
            unanswered.headMap(lastSeq, true).clear();
            synchronized (this) {
                notifyAll();
            }
        }

        /** Every seq sent was answered. */
        synchronized boolean settled() {
            return ackedSeq.get() >= nextSeq - 1;
        }

        /** A refused append: the producer goes on from the seq the server expects (gap) or from the one refused. */
        synchronized void refused(String code, Long expected, String correlationId) {
            if (expected != null) {
                nextSeq = expected;
            }
            else if (correlationId != null) {
                nextSeq = Math.min(nextSeq, Long.parseLong(correlationId));
            }
            notifyAll();
        }
    }

    /** One subscription, reconciled as its frames arrive. */
    final class Reader {
        final Stream stream;
        final long fromSeq;
        /** Advanced by the connection's event loop only; its {@code next} read by the run's thread. */
        final SeqCursor cursor;
        volatile boolean stateSeen;
        volatile boolean closedSeen;
        String finalState;
        long finalLastSeq;
        volatile Latency latency;

        Reader(Stream stream, long fromSeq) {
            this.stream = stream;
            this.fromSeq = fromSeq;
            this.cursor = new SeqCursor(fromSeq);
        }

        void chunk(long seq, String data) {
            cursor.take(seq);
            Latency l = latency;
            int colon = data == null ? -1 : data.indexOf(':');
            if (l != null && colon > 0) {
                l.record(Long.parseLong(data, 0, colon, 10));
            }
        }

        /** The first {@code stream} frame is the state at the subscribe; a closed state after it is the end. */
        void state(String state, long lastSeq) {
            if (!stateSeen) {
                stateSeen = true;
                return;
            }
            if (!"open".equals(state)) {
                finalState = state;
                finalLastSeq = lastSeq;
                closedSeen = true;
            }
        }
    }

    /** Append→reader latency, µs: every chunk, and those due from {@link #steadyFrom}. */
    static final class Latency {
        final Histogram steady = new ConcurrentHistogram(3_600_000_000L, 3);
        volatile long steadyFrom;

        void record(long dueNanos) {
            if (dueNanos >= steadyFrom) {
                long micros = Math.max(1, (System.nanoTime() - dueNanos) / 1000);
                steady.recordValue(Math.min(micros, steady.getHighestTrackableValue()));
            }
        }

        String steadyRow() {
            return ms(steady.getValueAtPercentile(50)) + " | " + ms(steady.getValueAtPercentile(99)) + " | "
                    + ms(steady.getValueAtPercentile(99.9)) + " | " + ms(steady.getMaxValue());
        }

        static String ms(long micros) {
            return String.format("%.1f ms", micros / 1000.0);
        }
    }

    interface Appended {
        void on(String streamId, long lastSeq);
    }

    interface Refused {
        void on(String streamId, String code, Long expectedSeq, String correlationId);
    }

    /** One user's WebSocket: acks its messages, hands stream frames to its readers, answers to its producer. */
    final class Conn implements WsLink.Events {
        final String user;
        volatile WsLink link;
        final java.util.concurrent.CompletableFuture<Void> welcomed = new java.util.concurrent.CompletableFuture<>();
        final Map<String, Reader> readers = new ConcurrentHashMap<>();
        volatile Appended onAppended = (id, s) -> { };
        volatile Refused onRefused = (id, c, e, k) -> { };
        volatile long lastWrite = System.nanoTime();

        Conn(String user) {
            this.user = user;
        }

        void send(String frame) {
            try {
                link.send(frame);
                lastWrite = System.nanoTime();
            }
            catch (Exception e) {
                count("write failed: " + e.getClass().getSimpleName());
            }
        }

        void append(Stream s, long seq, long dueNanos) {
            StringBuilder data = new StringBuilder().append(s.dueOf(seq, dueNanos)).append(':');
            while (data.length() < chunkChars) {
                data.append('x');
            }
            send("{\"type\":\"append\",\"streamId\":\"" + s.id + "\",\"correlationId\":\"" + seq + "\",\"chunks\":[{\"seq\":" + seq
                    + ",\"data\":\"" + data + "\"}]}");
        }

        void appendMany(Stream s, long from, long to) {
            StringBuilder b = new StringBuilder("{\"type\":\"append\",\"streamId\":\"").append(s.id).append("\",\"correlationId\":\"")
                    .append(from).append("\",\"chunks\":[");
            String pad = "x".repeat(Math.max(1, chunkChars - 12));
            for (long q = from; q <= to; q++) {
                if (q > from) {
                    b.append(',');
                }
                b.append("{\"seq\":").append(q).append(",\"data\":\"r").append(q).append(pad).append("\"}");
            }
            send(b.append("]}").toString());
        }

        @Override
        public void onText(String frame) {
            if (frame.startsWith("{\"type\":\"chunk\"")) {
                // the most frequent frame, read without a JSON tree: the generator's own cost
                // per frame is what its CPU share on a shared box is made of
                Reader r = readers.get(stringField(frame, "streamId"));
                if (r != null) {
                    r.chunk(Long.parseLong(numberField(frame, "seq")), stringField(frame, "data"));
                }
                return;
            }
            JsonNode f = JSON.readTree(frame);
            switch (f.path("type").asString()) {
                case "welcome" -> welcomed.complete(null);
                case "chunk" -> {
                    Reader r = readers.get(f.path("streamId").asString());
                    if (r != null) {
                        r.chunk(f.path("seq").asLong(), f.path("data").asString(null));
                    }
                }
                case "stream" -> {
                    Reader r = readers.get(f.path("streamId").asString());
                    if (r != null) {
                        r.state(f.path("state").asString(), f.path("lastSeq").asLong());
                    }
                }
                case "appended" -> onAppended.on(f.path("streamId").asString(), f.path("lastSeq").asLong());
                case "message" -> send("{\"type\":\"ack\",\"ids\":[" + f.path("deliveryId").asLong() + "]}");
                case "error" -> {
                    JsonNode e = f.get("expectedSeq");
                    if (f.has("streamId")) {
                        onRefused.on(f.path("streamId").asString(), f.path("code").asString(), e == null ? null : e.asLong(),
                                f.path("correlationId").asString(null));
                    }
                    else {
                        count("error: " + f.path("code").asString());
                    }
                }
                default -> {
                    // pong, sync, receipts: nothing to do
                }
            }
        }

        @Override
        public void onClose(int code) {
            if (code != 1000) {
                count("closed by the server: " + code);
            }
            welcomed.completeExceptionally(new IllegalStateException("closed " + code));
        }
    }

    /** The value of a string field without escapes (ids, the harness's own data); null when absent. */
    static String stringField(String frame, String name) {
        String key = "\"" + name + "\":\"";
        int i = frame.indexOf(key);
        if (i < 0) {
            return null;
        }
        int from = i + key.length();
        return frame.substring(from, frame.indexOf('"', from));
    }

    static String numberField(String frame, String name) {
        String key = "\"" + name + "\":";
        int from = frame.indexOf(key) + key.length();
        int to = from;
        while (to < frame.length() && (Character.isDigit(frame.charAt(to)) || frame.charAt(to) == '-')) {
            to++;
        }
        return frame.substring(from, to);
    }

    private Conn connect(String base, String user) throws Exception {
        Conn c = new Conn(user);
        URI uri = URI.create(base.replaceFirst("^http", "ws") + "/ws");
        c.link = connector.connect(uri, token(user), c).get(30, TimeUnit.SECONDS);
        c.welcomed.get(30, TimeUnit.SECONDS);
        conns.add(c);
        return c;
    }

    private Reader subscribe(Conn c, Stream s, long fromSeq) {
        Reader r = new Reader(s, fromSeq);
        c.readers.put(s.id, r);
        c.send("{\"type\":\"subscribe\",\"streamId\":\"" + s.id + "\",\"fromSeq\":" + fromSeq + "}");
        return r;
    }

    private void closeAll() {
        for (Conn c : conns) {
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
            for (Conn c : conns) {
                if (now - c.lastWrite > TimeUnit.SECONDS.toNanos(10)) {
                    c.send("{\"type\":\"ping\"}");
                }
            }
        }
    }

    private void awaitAll(List<Reader> rs, java.util.function.Predicate<Reader> done, String what) throws InterruptedException {
        long deadline = System.nanoTime() + drain.toNanos();
        for (Reader r : rs) {
            while (!done.test(r) && System.nanoTime() < deadline) {
                TimeUnit.MILLISECONDS.sleep(20);
            }
            if (!done.test(r)) {
                failed = true;
                count("not reached within the drain: " + what);
                return;
            }
        }
    }

    /** Every reader: the seqs from its fromSeq to the stream's last, each once, in order, and the final state with that last seq. */
    private void reconcile(List<Reader> rs) {
        for (Reader r : rs) {
            long last = r.stream.ackedSeq.get();
            boolean ok = r.closedSeen && "complete".equals(r.finalState) && r.finalLastSeq == last
                    && r.cursor.next == last + 1 && r.cursor.duplicates == 0 && r.cursor.gaps == 0;
            if (!ok) {
                failed = true;
                count("reconciliation: stream " + r.stream.id + " from " + r.fromSeq + ": next " + r.cursor.next + " of " + last
                        + ", " + r.cursor.duplicates + " duplicates, " + r.cursor.gaps + " missing, final " + r.finalState + " " + r.finalLastSeq);
            }
        }
    }

    // ---------------------------------------------------------------- REST

    private String user(String name) {
        return "sl" + run + "-" + name;
    }

    private final Map<String, String> tokens = new ConcurrentHashMap<>();

    private String token(String user) throws Exception {
        String t = tokens.get(user);
        if (t != null) {
            return t;
        }
        if (secret != null) {
            SignedJWT jwt = new SignedJWT(new JWSHeader(JWSAlgorithm.HS256), new JWTClaimsSet.Builder()
                    .subject(user).expirationTime(java.util.Date.from(Instant.now().plus(Duration.ofDays(1)))).build());
            jwt.sign(new MACSigner(secret.getBytes(StandardCharsets.UTF_8)));
            t = jwt.serialize();
        }
        else {
            t = post(producerBase, "/api/dev/tokens", null, Map.of("userId", user)).get("token").asString();
        }
        tokens.put(user, t);
        return t;
    }

    private String createChat(String owner, List<String> members) throws Exception {
        return post(producerBase, "/api/chats", token(owner), Map.of("members", members)).get("chatId").asString();
    }

    private String open(String producer, String chat) throws Exception {
        return post(producerBase, "/api/chats/" + chat + "/streams", token(producer), Map.of()).get("streamId").asString();
    }

    private void complete(String producer, Stream s) throws Exception {
        post(producerBase, "/api/streams/" + s.id + "/complete", token(producer), Map.of("lastSeq", s.ackedSeq.get()));
    }

    private JsonNode post(String base, String path, String token, Object body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() / 100 != 2) {
            throw new IllegalStateException(path + " answered " + r.statusCode() + " " + r.body());
        }
        return JSON.readTree(r.body());
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

    // ---------------------------------------------------------------- counts

    private final Map<String, AtomicLong> problems = new ConcurrentHashMap<>();

    private void count(String what) {
        problems.computeIfAbsent(what, k -> new AtomicLong()).incrementAndGet();
    }

    private String errorsLine() {
        if (problems.isEmpty()) {
            return "No refusals, errors or closes.";
        }
        StringBuilder b = new StringBuilder("Seen: ");
        problems.forEach((k, v) -> b.append(k).append(" ×").append(v.get()).append("; "));
        problems.clear();
        return b.toString();
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
