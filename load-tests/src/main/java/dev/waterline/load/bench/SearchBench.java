package dev.waterline.load.bench;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.waterline.load.clients.WsLink;
import dev.waterline.load.deployment.ServerProcess;
import dev.waterline.load.run.Report;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import tools.jackson.databind.JsonNode;

/**
 * {@code waterline-load search-bench}: how long {@code GET /api/search} takes (PROTOCOL.md §10) for
 * a user in many chats over many messages, for a rare word, a common word and a phrase.
 * <p>
 * Seeding goes through the server's REST and frames, as clients make them: the user creates
 * {@code --chats} chats, each with one of {@code --partners} others, and the partners send
 * {@code --messages} messages spread evenly over the chats. Message k (0-based) is eight filler
 * words drawn from 20,000 ({@code w} and a number, fixed by k), plus: {@code hello} when k % 5 == 0
 * (a common word, a fifth of the messages), {@code kestrel} when k % 10,000 == 7 (a rare one),
 * {@code blue harbour} when k % 1,000 == 3 (the phrase), and {@code blue} alone when k % 20 == 1,
 * {@code harbour} alone when k % 20 == 2 (so the phrase's words are each far commoner than it).
 * <p>
 * Then the first page ({@code limit=20}) of each query is timed {@code --requests} times after
 * {@code --warmup} untimed ones, one at a time; every result of the rare word is then paged
 * through and counted against what was seeded. p50/p90/p99/max per query go to
 * {@code search-bench.md} and {@code .json}.
 */
@Command(name = "search-bench", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Search latency (a rare word, a common word, a phrase) for a user in many chats over many messages."
                + " The server it starts: -Xmx512m -XX:+UseG1GC.")
public final class SearchBench implements Callable<Integer> {

    @Mixin
    BenchServer target;

    static final String JVM_OPTS = "-Xmx512m -XX:+UseG1GC";
    static final List<String> QUERIES = List.of("kestrel", "hello", "\"blue harbour\"");

    @Option(names = "--chats", defaultValue = "1000", description = "Chats of the user. Default: ${DEFAULT-VALUE}")
    int chats;

    @Option(names = "--partners", defaultValue = "100", description = "Other users, each in an equal share of the chats. Default: ${DEFAULT-VALUE}")
    int partners;

    @Option(names = "--messages", defaultValue = "1000000", description = "Messages seeded in all. Default: ${DEFAULT-VALUE}")
    int messages;

    @Option(names = "--requests", defaultValue = "200", description = "Timed requests per query. Default: ${DEFAULT-VALUE}")
    int requests;

    @Option(names = "--warmup", defaultValue = "20", description = "Untimed requests first, per query. Default: ${DEFAULT-VALUE}")
    int warmup;

    @Option(names = "--window", defaultValue = "200", description = "Seeding: frames per user awaiting their answer. Default: ${DEFAULT-VALUE}")
    int window;

    @Option(names = "--out", description = "Folder for search-bench.md/.json (and the started server's log). Default: target/load-results/search-<time>")
    Path out;

    /** Message k's body (see the class comment). */
    static String body(long k) {
        StringBuilder b = new StringBuilder(96);
        long x = k * 0x9E3779B97F4A7C15L;
        for (int j = 0; j < 8; j++) {
            x ^= x >>> 29;
            x *= 0xBF58476D1CE4E5B9L;
            b.append('w').append(Long.toString(Math.floorMod(x, 20_000L), 36)).append(' ');
        }
        if (k % 5 == 0) {
            b.append("hello ");
        }
        if (k % 10_000 == 7) {
            b.append("kestrel ");
        }
        if (k % 1_000 == 3) {
            b.append("blue harbour ");
        }
        if (k % 20 == 1) {
            b.append("blue ");
        }
        if (k % 20 == 2) {
            b.append("harbour ");
        }
        return b.toString().strip();
    }

    /** How many of {@code messages} messages carry the rare word. */
    static long rare(long messages) {
        return messages <= 7 ? 0 : (messages - 8) / 10_000 + 1;
    }

    @Override
    public Integer call() throws Exception {
        if (chats < 1 || partners < 1 || messages < 1 || requests < 1) {
            throw new IllegalArgumentException("--chats, --partners, --messages and --requests at least 1");
        }
        Path dir = out != null ? out : Path.of("target", "load-results",
                "search-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        Files.createDirectories(dir);
        ServerProcess server = null;
        try (WsLink.Connector connector = WsLink.connector(WsLink.Kind.netty)) {
            server = target.start(target.jvmOpts(JVM_OPTS), List.of("--waterline.gateway.max-sends-per-second=1000000",
                    "--waterline.gateway.max-inflight-sends=100000", "--waterline.reapers.max-pending=10000000",
                    "--waterline.api.requests-per-second=1000000", "--waterline.api.burst=1000000",
                    "--waterline.chats.max-chats-per-user=" + (chats + 10)), dir.resolve("server"));
            String base = server != null ? server.baseUrl() : target.url;
            BenchHttp http = new BenchHttp(base);
            String run = Long.toString(System.currentTimeMillis() % 100_000_000L, 36);
            String userToken = http.token("sb" + run + "-user");
            List<String> partnerIds = new ArrayList<>();
            List<String> partnerTokens = new ArrayList<>();
            for (int p = 0; p < partners; p++) {
                partnerIds.add("sb" + run + "-p" + p);
                partnerTokens.add(http.token(partnerIds.get(p)));
            }
            long seedStart = System.nanoTime();
            List<String> chatIds = http.chatsWithPartners(userToken, partnerIds, chats);
            seed(connector, http, partnerTokens, chatIds);
            double seedSeconds = (System.nanoTime() - seedStart) / 1e9;
            System.err.printf("search-bench: seeded %d chats and %d messages in %.1f s%n", chatIds.size(), messages, seedSeconds);

            Map<String, Histogram> timed = new LinkedHashMap<>();
            Map<String, Integer> firstPage = new LinkedHashMap<>();
            for (String q : QUERIES) {
                Histogram h = new Histogram(3_600_000_000L, 3);
                firstPage.put(q, measure(http, userToken, q, h));
                timed.put(q, h);
            }
            long rareFound = countAll(http, userToken, "kestrel");
            List<String> problems = new ArrayList<>();
            if (rareFound != rare(messages)) {
                problems.add("the rare word found " + rareFound + " times, seeded " + rare(messages));
            }
            for (String q : QUERIES) {
                if (firstPage.get(q) != Math.min(20, q.equals("kestrel") ? rare(messages) : 20)) {
                    problems.add(q + ": a first page of " + firstPage.get(q));
                }
            }

            Map<String, Object> result = new LinkedHashMap<>();
            result.put("server", base);
            result.put("serverJvmOpts", target.describe(JVM_OPTS));
            result.put("chats", chatIds.size());
            result.put("messages", messages);
            result.put("seedSeconds", Math.round(seedSeconds * 10) / 10.0);
            result.put("requests", requests);
            result.put("warmup", warmup);
            Map<String, Object> perQuery = new LinkedHashMap<>();
            StringBuilder rows = new StringBuilder();
            for (String q : QUERIES) {
                Map<String, Double> p = Report.percentiles(timed.get(q));
                perQuery.put(q, p);
                rows.append("| `").append(q).append("` | ").append(p.get("p50")).append(" ms | ").append(p.get("p90"))
                        .append(" ms | ").append(p.get("p99")).append(" ms | ").append(p.get("max")).append(" ms |\n");
            }
            result.put("firstPageMs", perQuery);
            result.put("problems", problems);
            BenchHttp.JSON.writerWithDefaultPrettyPrinter().writeValue(dir.resolve("search-bench.json").toFile(), result);
            String md = "# Search bench\n\n"
                    + "A user in " + chatIds.size() + " chats (" + partners + " partners) over " + messages + " messages seeded through"
                    + " the frames in " + result.get("seedSeconds") + " s; the first page (20) of `GET /api/search` timed " + requests
                    + " times per query after " + warmup + " untimed, one at a time; server " + result.get("serverJvmOpts") + ".\n\n"
                    + "| q | p50 | p90 | p99 | max |\n| --- | --- | --- | --- | --- |\n" + rows
                    + "\nChecks (the rare word's every result paged through and counted; full first pages): "
                    + (problems.isEmpty() ? "all as seeded" : problems) + "\n";
            Files.writeString(dir.resolve("search-bench.md"), md);
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

    /** Message k goes to chat k % chats, from that chat's partner; awaited a chat-round (one per chat) at a time, ten rounds together. */
    private void seed(WsLink.Connector connector, BenchHttp http, List<String> partnerTokens, List<String> chatIds) throws Exception {
        List<EntrySession> sessions = new ArrayList<>();
        try {
            for (String t : partnerTokens) {
                sessions.add(EntrySession.open(connector, http, t, window));
            }
            List<CompletableFuture<JsonNode>> pending = new ArrayList<>();
            long progressAt = System.nanoTime();
            for (long k = 0; k < messages; k++) {
                int chat = (int) (k % chatIds.size());
                String corr = "s" + k;
                pending.add(sessions.get(chat % partners).request(corr, "{\"type\":\"send\",\"correlationId\":\"" + corr
                        + "\",\"chatId\":\"" + chatIds.get(chat) + "\",\"body\":\"" + body(k) + "\"}"));
                if (pending.size() >= chatIds.size() * 10) {
                    CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).get(10, TimeUnit.MINUTES);
                    pending.clear();
                    if (System.nanoTime() - progressAt > TimeUnit.SECONDS.toNanos(30)) {
                        progressAt = System.nanoTime();
                        System.err.printf("search-bench: %d of %d messages accepted%n", k + 1, messages);
                    }
                }
            }
            CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).get(10, TimeUnit.MINUTES);
            long refused = sessions.stream().mapToLong(EntrySession::uncorrelatedErrors).sum();
            if (refused > 0) {
                throw new IllegalStateException(refused + " seeding frames were refused");
            }
        }
        finally {
            sessions.forEach(EntrySession::close);
        }
    }

    private static String searchPath(String q, String before) {
        return "/api/search?limit=20&q=" + URLEncoder.encode(q, StandardCharsets.UTF_8)
                + (before == null ? "" : "&before=" + URLEncoder.encode(before, StandardCharsets.UTF_8));
    }

    /** Times the first page of {@code q}; returns how many results it had. */
    private int measure(BenchHttp http, String token, String q, Histogram h) throws Exception {
        int results = 0;
        for (int i = 0; i < warmup + requests; i++) {
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(http.base + searchPath(q, null)))
                    .timeout(Duration.ofSeconds(30)).GET();
            long start = System.nanoTime();
            HttpResponse<String> r = http.send(b, token);
            long micros = (System.nanoTime() - start) / 1000;
            if (r.statusCode() != 200) {
                throw new IllegalStateException("search " + q + " answered " + r.statusCode() + " " + r.body());
            }
            if (i >= warmup) {
                h.recordValue(micros);
                results = BenchHttp.JSON.readTree(r.body()).get("results").size();
            }
        }
        return results;
    }

    /** Every result of {@code q}, paged through. */
    private static long countAll(BenchHttp http, String token, String q) throws Exception {
        long n = 0;
        String before = null;
        do {
            JsonNode page = http.get(searchPath(q, before), token);
            n += page.get("results").size();
            before = page.get("next").isNull() ? null : page.get("next").asString();
        } while (before != null);
        return n;
    }
}
