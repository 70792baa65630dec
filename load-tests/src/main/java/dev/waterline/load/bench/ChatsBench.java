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
 * {@code waterline-load chats-bench}: how long the chat list takes for a user in many chats, each
 * with its unread count and last message (PROTOCOL.md §10).
 * <p>
 * Seeding goes through the server's REST and frames, as clients make them: the user creates
 * {@code --chats} chats, each with one of {@code --partners} others; each partner sends
 * {@code --messages-per-chat} messages into each of its chats; then, in every third chat, the user
 * replies and the partner answers once more; in every other chat of the rest, the user sends a read
 * receipt at seq 1; and in every tenth chat (from the fifth) the partner deletes its last message of
 * the first round. So the lists read receipts, own messages, deletes and several messages per chat,
 * and the harness knows each chat's expected {@code unread}. The started server's REST rate, send rate,
 * in-flight cap, unacked allowance and membership quota are lifted so that seeding runs at the
 * server's pace.
 * <p>
 * Then {@code GET /api/chats?limit=N} (the first page) is timed {@code --requests} times after
 * {@code --warmup} untimed ones, one at a time, for each N of {@code --limits}. Every chat's
 * {@code unread} and {@code lastMessage} are checked against what was seeded, through all the pages.
 * p50/p90/p99/max per page size go to {@code chats-bench.md} and {@code .json}.
 */
@Command(name = "chats-bench", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Chat list latency (unread counts and last messages) for a user in many chats. The server it starts:"
                + " -Xmx512m -XX:+UseG1GC.")
public final class ChatsBench implements Callable<Integer> {

    @Mixin
    BenchServer target;

    static final String JVM_OPTS = "-Xmx512m -XX:+UseG1GC";

    @Option(names = "--chats", defaultValue = "10000", description = "Chats of the user. Default: ${DEFAULT-VALUE}")
    int chats;

    @Option(names = "--partners", defaultValue = "100", description = "Other users, each in an equal share of the chats. Default: ${DEFAULT-VALUE}")
    int partners;

    @Option(names = "--messages-per-chat", defaultValue = "3", description = "The partner's first round of messages in each chat (at least 2)."
            + " Default: ${DEFAULT-VALUE}")
    int messagesPerChat;

    @Option(names = "--limits", split = ",", defaultValue = "100,500", description = "Page sizes to time. Default: ${DEFAULT-VALUE}")
    List<Integer> limits;

    @Option(names = "--requests", defaultValue = "300", description = "Timed requests per page size. Default: ${DEFAULT-VALUE}")
    int requests;

    @Option(names = "--warmup", defaultValue = "50", description = "Untimed requests first, per page size. Default: ${DEFAULT-VALUE}")
    int warmup;

    @Option(names = "--window", defaultValue = "200", description = "Seeding: frames per user awaiting their answer. Default: ${DEFAULT-VALUE}")
    int window;

    @Option(names = "--out", description = "Folder for chats-bench.md/.json (and the started server's log). Default: target/load-results/chats-<time>")
    Path out;

    /** One seeded chat: its id, its partner, the partner's first-round message ids, and the list's expectations. */
    static final class Seeded {
        final String chatId;
        final int partner;
        final List<String> firstRound = new ArrayList<>();
        long expectedUnread;
        String expectedLast;
        boolean expectedDeleted;

        Seeded(String chatId, int partner) {
            this.chatId = chatId;
            this.partner = partner;
        }
    }

    @Override
    public Integer call() throws Exception {
        if (chats < 1 || partners < 1 || messagesPerChat < 2 || requests < 1 || limits.stream().anyMatch(l -> l < 1 || l > 500)) {
            throw new IllegalArgumentException("--chats, --partners and --requests at least 1, --messages-per-chat at least 2,"
                    + " --limits each from 1 to 500");
        }
        Path dir = out != null ? out : Path.of("target", "load-results",
                "chats-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        Files.createDirectories(dir);
        ServerProcess server = null;
        try (WsLink.Connector connector = WsLink.connector(WsLink.Kind.netty)) {
            server = target.start(target.jvmOpts(JVM_OPTS), List.of("--waterline.gateway.max-sends-per-second=1000000",
                    "--waterline.gateway.max-inflight-sends=100000", "--waterline.reapers.max-pending=100000",
                    "--waterline.api.requests-per-second=1000000", "--waterline.api.burst=1000000",
                    "--waterline.chats.max-chats-per-user=" + (chats + 10)), dir.resolve("server"));
            String base = server != null ? server.baseUrl() : target.url;
            BenchHttp http = new BenchHttp(base);
            String run = Long.toString(System.currentTimeMillis() % 100_000_000L, 36);
            String user = "cb" + run + "-user";
            String userToken = http.token(user);
            List<String> partnerIds = new ArrayList<>();
            List<String> partnerTokens = new ArrayList<>();
            for (int p = 0; p < partners; p++) {
                partnerIds.add("cb" + run + "-p" + p);
                partnerTokens.add(http.token(partnerIds.get(p)));
            }

            long seedStart = System.nanoTime();
            List<Seeded> seeded = createChats(http, userToken, partnerIds);
            long entries = seed(connector, http, userToken, partnerTokens, seeded);
            double seedSeconds = (System.nanoTime() - seedStart) / 1e9;
            System.err.printf("chats-bench: seeded %d chats and %d entries in %.1f s%n", seeded.size(), entries, seedSeconds);

            List<String> problems = check(http, userToken, seeded);
            Map<Integer, Histogram> timed = new LinkedHashMap<>();
            Map<Integer, Long> bytes = new LinkedHashMap<>();
            for (int limit : limits) {
                Histogram h = new Histogram(3_600_000_000L, 3);
                bytes.put(limit, measure(http, userToken, limit, h));
                timed.put(limit, h);
            }

            Map<String, Object> result = new LinkedHashMap<>();
            result.put("server", base);
            result.put("serverJvmOpts", target.describe(JVM_OPTS));
            result.put("chats", seeded.size());
            result.put("entries", entries);
            result.put("seedSeconds", Math.round(seedSeconds * 10) / 10.0);
            result.put("requests", requests);
            result.put("warmup", warmup);
            Map<String, Object> pages = new LinkedHashMap<>();
            StringBuilder rows = new StringBuilder();
            for (int limit : limits) {
                Map<String, Double> p = Report.percentiles(timed.get(limit));
                pages.put(Integer.toString(limit), Map.of("ms", p, "bytes", bytes.get(limit)));
                rows.append("| ").append(limit).append(" | ").append(p.get("p50")).append(" ms | ").append(p.get("p90"))
                        .append(" ms | ").append(p.get("p99")).append(" ms | ").append(p.get("max")).append(" ms | ")
                        .append(bytes.get(limit)).append(" |\n");
            }
            result.put("firstPage", pages);
            result.put("problems", problems);
            BenchHttp.JSON.writerWithDefaultPrettyPrinter().writeValue(dir.resolve("chats-bench.json").toFile(), result);
            String md = "# Chat list bench\n\n"
                    + "A user in " + seeded.size() + " chats (" + partners + " partners; " + entries + " entries seeded through REST"
                    + " and the frames in " + result.get("seedSeconds") + " s: messages, replies, read receipts, deletes); the first"
                    + " page of `GET /api/chats` timed " + requests + " times per page size after " + warmup + " untimed, one at a"
                    + " time; server " + result.get("serverJvmOpts") + ".\n\n"
                    + "| limit | p50 | p90 | p99 | max | page bytes |\n| --- | --- | --- | --- | --- | --- |\n" + rows
                    + "\nChecks (every chat's `unread` and `lastMessage` through all pages): "
                    + (problems.isEmpty() ? "all as seeded" : problems.size() + " problems: " + problems.subList(0, Math.min(5, problems.size())))
                    + "\n";
            Files.writeString(dir.resolve("chats-bench.md"), md);
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

    /** The user's chats, each with one partner; in list order. */
    private List<Seeded> createChats(BenchHttp http, String userToken, List<String> partnerIds) throws Exception {
        List<String> ids = http.chatsWithPartners(userToken, partnerIds, chats);
        List<Seeded> out = new ArrayList<>();
        for (int i = 0; i < ids.size(); i++) {
            out.add(new Seeded(ids.get(i), i % partners));
        }
        out.sort((a, b) -> a.chatId.compareTo(b.chatId));
        return out;
    }

    /** Seeds the messages, replies, deletes and receipts (see the class comment); returns how many entries were made. */
    private long seed(WsLink.Connector connector, BenchHttp http, String userToken, List<String> partnerTokens, List<Seeded> seeded)
            throws Exception {
        List<EntrySession> sessions = new ArrayList<>();
        long[] n = {0};
        try (EntrySession me = EntrySession.open(connector, http, userToken, window)) {
            for (String t : partnerTokens) {
                sessions.add(EntrySession.open(connector, http, t, window));
            }
            List<CompletableFuture<JsonNode>> round = new ArrayList<>();
            for (int m = 0; m < messagesPerChat; m++) {
                for (Seeded c : seeded) {
                    int index = m;
                    round.add(send(sessions.get(c.partner), c.chatId, "message " + m + " of " + c.chatId, n)
                            .thenApply(a -> {
                                if (index == messagesPerChat - 1) {
                                    c.expectedLast = a.get("messageId").asString();
                                }
                                return a;
                            }));
                }
                await(round);
            }
            for (Seeded c : seeded) {
                c.expectedUnread = messagesPerChat;
            }
            for (int i = 0; i < seeded.size(); i++) {
                Seeded c = seeded.get(i);
                if (i % 3 == 0) {
                    round.add(send(me, c.chatId, "a reply in " + c.chatId, n));
                }
                if (i % 10 == 5) {
                    String corr = "d" + n[0]++;
                    String target = c.expectedLast;
                    round.add(sessions.get(c.partner).request(corr, "{\"type\":\"delete\",\"correlationId\":\"" + corr
                            + "\",\"chatId\":\"" + c.chatId + "\",\"messageId\":\"" + target + "\"}"));
                    c.expectedDeleted = true;
                    c.expectedUnread--;
                }
            }
            await(round);
            for (int i = 0; i < seeded.size(); i++) {
                Seeded c = seeded.get(i);
                if (i % 3 == 0) {
                    c.expectedDeleted = false;
                    c.expectedUnread = 1;
                    round.add(send(sessions.get(c.partner), c.chatId, "an answer in " + c.chatId, n)
                            .thenApply(a -> {
                                c.expectedLast = a.get("messageId").asString();
                                return a;
                            }));
                }
                else if (i % 2 == 0) {
                    me.post("{\"type\":\"read\",\"chatId\":\"" + c.chatId + "\",\"seq\":1}");
                    c.expectedUnread--;
                }
            }
            await(round);
            awaitReceipts(http, userToken, seeded);
            long refused = me.uncorrelatedErrors() + sessions.stream().mapToLong(EntrySession::uncorrelatedErrors).sum();
            if (refused > 0) {
                throw new IllegalStateException(refused + " seeding frames were refused");
            }
        }
        finally {
            sessions.forEach(EntrySession::close);
        }
        return n[0];
    }

    private static CompletableFuture<JsonNode> send(EntrySession s, String chat, String body, long[] n) throws InterruptedException {
        String corr = "s" + n[0]++;
        return s.request(corr, "{\"type\":\"send\",\"correlationId\":\"" + corr + "\",\"chatId\":\"" + chat + "\",\"body\":\"" + body + "\"}");
    }

    private static void await(List<CompletableFuture<JsonNode>> round) throws Exception {
        CompletableFuture.allOf(round.toArray(CompletableFuture[]::new)).get(10, TimeUnit.MINUTES);
        round.clear();
    }

    /** Receipts are stored in arrival order: once the last chat that got one shows it, they all are. */
    private static void awaitReceipts(BenchHttp http, String token, List<Seeded> seeded) throws Exception {
        String last = null;
        for (int i = 0; i < seeded.size(); i++) {
            if (i % 3 != 0 && i % 2 == 0) {
                last = seeded.get(i).chatId;
            }
        }
        if (last == null) {
            return;
        }
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (http.get("/api/chats/" + last, token).path("readSeq").size() == 0) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the read receipts were not stored within 2 minutes");
            }
            Thread.sleep(100);
        }
    }

    /** Every chat, through all pages of 500, against what was seeded. */
    private static List<String> check(BenchHttp http, String token, List<Seeded> seeded) throws Exception {
        List<String> problems = new ArrayList<>();
        Map<String, Seeded> byId = new LinkedHashMap<>();
        seeded.forEach(c -> byId.put(c.chatId, c));
        int listed = 0;
        String after = null;
        do {
            JsonNode page = http.get("/api/chats?limit=500" + (after == null ? "" : "&after=" + after), token);
            for (JsonNode c : page.get("chats")) {
                listed++;
                Seeded s = byId.get(c.get("chatId").asString());
                if (s == null) {
                    problems.add("an unknown chat is listed: " + c.get("chatId").asString());
                    continue;
                }
                JsonNode last = c.get("lastMessage");
                if (c.get("unread").asLong() != s.expectedUnread) {
                    problems.add(s.chatId + ": unread " + c.get("unread").asLong() + ", expected " + s.expectedUnread);
                }
                if (last == null || last.isNull() || !last.get("messageId").asString().equals(s.expectedLast)
                        || last.get("deleted").asBoolean() != s.expectedDeleted) {
                    problems.add(s.chatId + ": lastMessage " + last + ", expected " + s.expectedLast + (s.expectedDeleted ? " (deleted)" : ""));
                }
            }
            after = page.get("next").isNull() ? null : page.get("next").asString();
        } while (after != null);
        if (listed != seeded.size()) {
            problems.add(listed + " chats listed of " + seeded.size());
        }
        return problems;
    }

    /** Times the first page of {@code limit}; returns its size in bytes. */
    private long measure(BenchHttp http, String token, int limit, Histogram h) throws Exception {
        long size = 0;
        for (int i = 0; i < warmup + requests; i++) {
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(http.base + "/api/chats?limit=" + limit))
                    .timeout(Duration.ofSeconds(30)).GET();
            long start = System.nanoTime();
            HttpResponse<String> r = http.send(b, token);
            long micros = (System.nanoTime() - start) / 1000;
            if (r.statusCode() != 200) {
                throw new IllegalStateException("GET /api/chats?limit=" + limit + " answered " + r.statusCode() + " " + r.body());
            }
            if (i >= warmup) {
                h.recordValue(micros);
                size = r.body().length();
            }
        }
        return size;
    }
}
