package dev.waterline.load.bench;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
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
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.waterline.load.clients.WsLink;
import dev.waterline.load.deployment.ServerProcess;
import dev.waterline.load.run.Report;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import tools.jackson.databind.JsonNode;

/**
 * {@code waterline-load history-bench}: how long a history page takes in a long chat whose every
 * message has reactions (PROTOCOL.md §4, §9: a page shows each message's current state, its
 * reaction counts and the reader's own).
 * <p>
 * Seeding goes through the server's own frames, as clients make them: one member sends the
 * messages over its WebSocket, the other reacts to each as soon as it is accepted (so messages and
 * reactions interleave in the log, as in a live chat), each with a window of frames awaiting their
 * answer; both ack every delivery. Started by this command, the server's per-connection send rate,
 * in-flight cap and unacked allowance ({@code max-pending}) are lifted so that seeding runs at the
 * group commit's pace (about a minute for
 * 100,000 entries on two cores); against {@code --url} they are the server's own. Going through
 * the frames, rather than SQL into the tables, seeds what the server itself writes (current
 * reactions, outbox rows, sequence), whatever its schema becomes.
 * <p>
 * Then {@code --requests} pages {@code GET /api/chats/{c}/messages?since=X&limit=N}, X a random
 * entry (from the first to the one {@code N} before the last, so every page is full), one at a time
 * after {@code --warmup} untimed ones (or {@code --concurrency} at once), read as the member who
 * reacted (so each page has its {@code myReactions}). Every timed page is checked afterwards: full,
 * in seq order, each text message with reactions. p50/p90/p99/p99.9/max go to
 * {@code history-bench.md} and {@code .json}.
 */
@Command(name = "history-bench", mixinStandardHelpOptions = true, sortOptions = false,
        description = "History page latency in a long chat with reactions on every message. The server it starts: -Xmx512m -XX:+UseG1GC.")
public final class HistoryBench implements Callable<Integer> {

    @Mixin
    BenchServer target;

    /** The started server's JVM options unless --server-jvm-opts says otherwise. */
    static final String JVM_OPTS = "-Xmx512m -XX:+UseG1GC";

    @Option(names = "--entries", defaultValue = "100000", description = "Entries of the chat: messages and their reactions. Default: ${DEFAULT-VALUE}")
    int entries;

    @Option(names = "--reactions-per-message", defaultValue = "1",
            description = "Reactions to each message (each another emoji, by the two members in turn; at most 8; 0 for a chat of"
                    + " messages alone, to compare with). Default: ${DEFAULT-VALUE}")
    int reactionsPerMessage;

    @Option(names = "--payload", defaultValue = "100", description = "Message body length in characters. Default: ${DEFAULT-VALUE}")
    int payload;

    @Option(names = "--window", defaultValue = "200", description = "Seeding: frames per member awaiting their answer. Default: ${DEFAULT-VALUE}")
    int window;

    @Option(names = "--limit", defaultValue = "100", description = "Entries per page. Default: ${DEFAULT-VALUE}")
    int limit;

    @Option(names = "--requests", defaultValue = "2000", description = "Timed pages. Default: ${DEFAULT-VALUE}")
    int requests;

    @Option(names = "--warmup", defaultValue = "500", description = "Untimed pages first. Default: ${DEFAULT-VALUE}")
    int warmup;

    @Option(names = "--concurrency", defaultValue = "1", description = "Pages read at once. Default: ${DEFAULT-VALUE}")
    int concurrency;

    @Option(names = "--out", description = "Folder for history-bench.md/.json (and the started server's log). Default: target/load-results/history-<time>")
    Path out;

    static final String[] EMOJI = {"\uD83D\uDC4D", "\uD83C\uDF89", "\u2764\uFE0F", "\uD83D\uDE02"};

    /** A seeded entry: its id and position. */
    record Seeded(String messageId, long seq) {
    }

    @Override
    public Integer call() throws Exception {
        if (reactionsPerMessage < 0 || reactionsPerMessage > 2 * EMOJI.length) {
            throw new IllegalArgumentException("--reactions-per-message: 0 to " + 2 * EMOJI.length);
        }
        Path dir = out != null ? out : Path.of("target", "load-results",
                "history-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        Files.createDirectories(dir);
        ServerProcess server = null;
        try (WsLink.Connector connector = WsLink.connector(WsLink.Kind.netty)) {
            // seeding: one member sends thousands a second and receives as many; a person does
                // neither, so the per-connection rate, the in-flight cap and the unacked allowance
                // (20: at thousands a second more than that are always on the wire) are lifted
            server = target.start(target.jvmOpts(JVM_OPTS), List.of("--waterline.gateway.max-sends-per-second=1000000",
                    "--waterline.gateway.max-inflight-sends=100000", "--waterline.reapers.max-pending=100000"), dir.resolve("server"));
            String base = server != null ? server.baseUrl() : target.url;
            BenchHttp http = new BenchHttp(base);
            String run = Long.toString(System.currentTimeMillis() % 100_000_000L, 36);
            String writer = "hb" + run + "-writer", reactor = "hb" + run + "-reactor";
            String writerToken = http.token(writer), reactorToken = http.token(reactor);
            String chat = http.chat(writerToken, List.of(reactor));

            long seedStart = System.nanoTime();
            List<Seeded> log = seed(connector, http, chat, writerToken, reactorToken);
            double seedSeconds = (System.nanoTime() - seedStart) / 1e9;
            System.err.printf("history-bench: seeded %d entries in %.1f s (%.0f entries/s)%n", log.size(), seedSeconds, log.size() / seedSeconds);

            Timed timed = measure(http, chat, reactorToken, log);
            List<String> problems = check(timed.pages);
            Map<String, Object> result = new LinkedHashMap<>();
            result.put("server", base);
            result.put("serverJvmOpts", target.describe(JVM_OPTS));
            result.put("entries", log.size());
            result.put("messages", log.size() / (1 + reactionsPerMessage));
            result.put("reactionsPerMessage", reactionsPerMessage);
            result.put("seedSeconds", Math.round(seedSeconds * 10) / 10.0);
            result.put("limit", limit);
            result.put("requests", requests);
            result.put("warmup", warmup);
            result.put("concurrency", concurrency);
            result.put("pageMs", Report.percentiles(timed.latency));
            result.put("meanPageBytes", timed.bytes.get() / Math.max(1, requests));
            result.put("problems", problems);
            BenchHttp.JSON.writerWithDefaultPrettyPrinter().writeValue(dir.resolve("history-bench.json").toFile(), result);
            Map<String, Double> p = Report.percentiles(timed.latency);
            String md = "# History page bench\n\n"
                    + "A chat of " + log.size() + " entries (" + result.get("messages") + " messages, " + reactionsPerMessage
                    + " reaction(s) on each), seeded through the frames in " + result.get("seedSeconds") + " s; "
                    + requests + " pages of " + limit + " at random positions after " + warmup + " untimed, " + concurrency
                    + " at a time, read as a member who reacted; server " + result.get("serverJvmOpts") + ".\n\n"
                    + "| p50 | p90 | p99 | p99.9 | max | mean page bytes | checks |\n| --- | --- | --- | --- | --- | --- | --- |\n"
                    + "| " + p.get("p50") + " ms | " + p.get("p90") + " ms | " + p.get("p99") + " ms | " + p.get("p99.9") + " ms | "
                    + p.get("max") + " ms | " + result.get("meanPageBytes") + " | "
                    + (problems.isEmpty() ? "every page full, in order" + (reactionsPerMessage > 0 ? ", each message with reactions" : "") : problems.size() + " problems: "
                    + problems.subList(0, Math.min(5, problems.size()))) + " |\n";
            Files.writeString(dir.resolve("history-bench.md"), md);
            System.out.println(md);
            System.out.println("Reports in " + dir.toAbsolutePath());
            return problems.isEmpty() ? 0 : 2;
        }
        finally {
            if (server != null) {
                server.close();
            }
        }
    }

    /** The writer's messages, and the reactions to each as soon as it is accepted; every entry's id and seq, in seq order. */
    private List<Seeded> seed(WsLink.Connector connector, BenchHttp http, String chat, String writerToken, String reactorToken)
            throws Exception {
        int messages = entries / (1 + reactionsPerMessage);
        ConcurrentLinkedQueue<Seeded> log = new ConcurrentLinkedQueue<>();
        LinkedBlockingQueue<String> toReact = new LinkedBlockingQueue<>();
        List<CompletableFuture<JsonNode>> answers = new ArrayList<>();
        String body = "m".repeat(Math.max(1, payload));
        String done = "";
        try (EntrySession writer = EntrySession.open(connector, http, writerToken, window);
             EntrySession reactor = EntrySession.open(connector, http, reactorToken, window)) {
            EntrySession[] by = {reactor, writer};
            Thread reacting = Thread.ofPlatform().name("seed-reactions").start(() -> {
                List<CompletableFuture<JsonNode>> mine = new ArrayList<>();
                long n = 0;
                try {
                    for (String target; !(target = toReact.take()).isEmpty(); ) {
                        for (int r = 0; r < reactionsPerMessage; r++) {
                            String corr = "r" + n++;
                            String frame = "{\"type\":\"react\",\"correlationId\":\"" + corr + "\",\"chatId\":\"" + chat
                                    + "\",\"messageId\":\"" + target + "\",\"emoji\":\"" + EMOJI[(r / 2) % EMOJI.length] + "\",\"on\":true}";
                            mine.add(by[r % 2].request(corr, frame).thenApply(a -> note(log, a)));
                        }
                    }
                    CompletableFuture.allOf(mine.toArray(CompletableFuture[]::new)).get(10, TimeUnit.MINUTES);
                }
                catch (Exception e) {
                    throw new IllegalStateException("seeding the reactions failed", e);
                }
            });
            AtomicLong progress = new AtomicLong();
            for (int i = 0; i < messages; i++) {
                String corr = "m" + i;
                answers.add(writer.request(corr, "{\"type\":\"send\",\"correlationId\":\"" + corr + "\",\"chatId\":\"" + chat
                        + "\",\"body\":\"" + body + "\"}").thenApply(a -> {
                    if (reactionsPerMessage > 0) {
                        toReact.add(a.get("messageId").asString());
                    }
                    if (progress.incrementAndGet() % 10_000 == 0) {
                        System.err.println("history-bench: " + progress.get() + " messages accepted");
                    }
                    return note(log, a);
                }));
            }
            CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).get(10, TimeUnit.MINUTES);
            toReact.add(done);
            reacting.join(TimeUnit.MINUTES.toMillis(10));
            if (writer.retries() + reactor.retries() > 0) {
                System.err.println("history-bench: " + (writer.retries() + reactor.retries()) + " frames sent again after rate_limited/overloaded");
            }
        }
        List<Seeded> sorted = new ArrayList<>(log);
        sorted.sort(Comparator.comparingLong(Seeded::seq));
        if (sorted.size() != messages * (1 + reactionsPerMessage)) {
            throw new IllegalStateException("seeded " + sorted.size() + " entries of " + messages * (1 + reactionsPerMessage));
        }
        return sorted;
    }

    private static JsonNode note(ConcurrentLinkedQueue<Seeded> log, JsonNode accepted) {
        log.add(new Seeded(accepted.get("messageId").asString(), accepted.get("seq").asLong()));
        return accepted;
    }

    record Timed(Histogram latency, AtomicLong bytes, ConcurrentLinkedQueue<Page> pages) {
    }

    /** One timed page: the entry it was asked after, and the answer. */
    record Page(Seeded since, String body) {
    }

    private Timed measure(BenchHttp http, String chat, String token, List<Seeded> log) throws Exception {
        Timed t = new Timed(new ConcurrentHistogram(3_600_000_000L, 3), new AtomicLong(), new ConcurrentLinkedQueue<>());
        int positions = Math.max(1, log.size() - limit);
        Random random = new Random(11);
        List<Seeded> order = new ArrayList<>();
        for (int i = 0; i < warmup + requests; i++) {
            order.add(log.get(random.nextInt(positions)));
        }
        AtomicLong next = new AtomicLong();
        try (ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, concurrency))) {
            List<Future<?>> fs = new ArrayList<>();
            for (int w = 0; w < Math.max(1, concurrency); w++) {
                fs.add(pool.submit(() -> {
                    for (long i; (i = next.getAndIncrement()) < order.size(); ) {
                        Seeded since = order.get((int) i);
                        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(http.base + "/api/chats/" + chat + "/messages?since="
                                + since.messageId() + "&limit=" + limit)).timeout(Duration.ofSeconds(30)).GET();
                        long start = System.nanoTime();
                        HttpResponse<String> r = http.send(b, token);
                        long micros = (System.nanoTime() - start) / 1000;
                        if (r.statusCode() != 200) {
                            throw new IllegalStateException("page after " + since + " answered " + r.statusCode() + " " + r.body());
                        }
                        if (i >= warmup) {
                            t.latency.recordValue(micros);
                            t.bytes.addAndGet(r.body().length());
                            t.pages.add(new Page(since, r.body()));
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
        }
        return t;
    }

    /** Each timed page full, starting right after its {@code since}, in seq order, every text message with reactions. */
    private List<String> check(ConcurrentLinkedQueue<Page> pages) {
        List<String> problems = new ArrayList<>();
        for (Page p : pages) {
            JsonNode messages = BenchHttp.JSON.readTree(p.body()).get("messages");
            if (messages.size() != limit) {
                problems.add("page after seq " + p.since().seq() + ": " + messages.size() + " entries");
                continue;
            }
            long expect = p.since().seq() + 1;
            for (JsonNode m : messages) {
                if (m.get("seq").asLong() != expect++) {
                    problems.add("page after seq " + p.since().seq() + ": seq " + m.get("seq").asLong() + " out of order");
                    break;
                }
                String kind = m.path("kind").asString("text");
                JsonNode reactions = m.path("reactions");
                if (reactionsPerMessage > 0 && kind.equals("text") && (!reactions.isObject() || reactions.isEmpty())) {
                    problems.add("message " + m.get("messageId").asString() + " (seq " + m.get("seq").asLong() + ") shows no reactions");
                }
            }
        }
        return problems;
    }
}
