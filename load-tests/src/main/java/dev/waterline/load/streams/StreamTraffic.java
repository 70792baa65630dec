package dev.waterline.load.streams;

import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import dev.waterline.load.chat.LoadRun;
import dev.waterline.load.clients.SeqCursor;
import dev.waterline.load.clients.WsLink;
import tools.jackson.databind.JsonNode;

/**
 * Streams beside a chat load, for the chaos runs: a number of bots, each writing one stream in a
 * chat of its own at a steady rate of chunks (a reply token by token), each stream read live by
 * two members; every connection reconnects (to the next node when its own does not answer) as
 * PROTOCOL.md §6 asks of a client, and the whole is reconciled chunk by chunk at the end.
 * <p>
 * Design note, the producer: one append in flight per stream, a chunk's data a function of its
 * seq, so that a retry carries what the first attempt carried. An append unanswered after 5 s
 * or across a reconnect is sent again with the same seq (the server acknowledges a stored one
 * again); a {@code gap} or {@code conflict} answer names the seq the server expects, so a chunk
 * stored by an attempt whose answer was lost is counted as stored, not sent twice; refusals
 * ({@code unavailable}, {@code overloaded}) are retried after 200 ms. A reader resubscribes from
 * one after the last seq it saw. At the end each stream is completed at the last seq the server
 * holds, and every reader must have seen every seq from 1 to that one once, in order; a seq the
 * server acknowledged that it does not hold at the end is lost as well.
 */
public final class StreamTraffic {

    private final List<String> bases;
    private final String jwtSecret;
    private final int streams;
    private final double chunksPerSecond;
    private final PrintStream err;
    private final String run = Long.toString(System.nanoTime() % 1_000_000_000L, 36);
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final WsLink.Connector connector = WsLink.connector(WsLink.Kind.netty);
    private final List<Bot> bots = new ArrayList<>();
    private final List<Peer> peers = new ArrayList<>();
    private final Map<String, LongAdder> seen = new ConcurrentHashMap<>();
    private volatile boolean appending;
    /** Set once the last appends were answered: nothing is sent again, so what the server holds is final. */
    private volatile boolean closing;
    private volatile boolean running;
    private Thread ticker;

    /** What the reconciliation found. */
    public record Result(int streams, long stored, long acked, long lost, long duplicates, long reconnects, Map<String, Long> answers) {
        public String line() {
            return streams + " streams, " + stored + " chunks stored, " + lost + " lost, " + duplicates + " duplicates, "
                    + reconnects + " reconnects" + (answers.isEmpty() ? "" : ", " + answers);
        }
    }

    public StreamTraffic(List<String> bases, String jwtSecret, int streams, double chunksPerSecond, PrintStream err) {
        this.bases = List.copyOf(bases);
        this.jwtSecret = jwtSecret;
        this.streams = streams;
        this.chunksPerSecond = chunksPerSecond;
        this.err = err;
    }

    /** Chats and streams made, every connection open and every reader subscribed. */
    public void start() throws Exception {
        for (int i = 0; i < streams; i++) {
            String p = "st" + run + "-bot" + i;
            String r0 = "st" + run + "-r" + i + "a";
            String r1 = "st" + run + "-r" + i + "b";
            String chat = post("/api/chats", p, Map.of("members", List.of(r0, r1))).get("chatId").asString();
            String stream = post("/api/chats/" + chat + "/streams", p, Map.of("title", "chaos " + i)).get("streamId").asString();
            Bot bot = new Bot(stream, new Peer(p, i));
            bot.readers.add(new Reader(stream, new Peer(r0, i + 1)));
            bot.readers.add(new Reader(stream, new Peer(r1, i + 2)));
            bots.add(bot);
        }
        running = true;
        appending = true;
        for (Bot b : bots) {
            b.producer.onFrame = b::frame;
            peers.add(b.producer);
            for (Reader r : b.readers) {
                r.peer.onFrame = r::frame;
                r.peer.onConnected = r::subscribe;
                peers.add(r.peer);
            }
        }
        for (Peer p : peers) {
            Thread.ofVirtual().name("stream-peer-" + p.user).start(p::keepConnected);
        }
        ticker = Thread.ofPlatform().daemon().name("stream-traffic").start(this::tick);
    }

    /**
     * Stops appending (the appends in flight get {@code drain} to be answered), then completes
     * every stream at what the server holds and waits for the readers (another {@code drain});
     * the verdict. Every thread and connection of the traffic is stopped however it ends.
     */
    public Result finish(Duration drain) throws Exception {
        try {
            return reconcile(drain);
        }
        finally {
            stop();
        }
    }

    /** Stops every thread and connection of the traffic (also when {@link #finish} was never reached). */
    public void stop() {
        running = false;
        if (ticker != null) {
            ticker.interrupt();
        }
        for (Peer p : peers) {
            p.close();
            synchronized (p.closed) {
                p.closed.notifyAll();
            }
        }
        connector.close();
    }

    private Result reconcile(Duration drain) throws Exception {
        long deadline = System.nanoTime() + drain.toNanos();
        appending = false;
        while (System.nanoTime() < deadline && bots.stream().anyMatch(b -> b.inFlight != 0)) {
            TimeUnit.MILLISECONDS.sleep(50);
        }
        // nothing is sent again from here: what the server holds now is what each stream ends with
        closing = true;
        long reconcileBy = System.nanoTime() + drain.toNanos();
        long stored = 0, acked = 0, lost = 0, duplicates = 0;
        for (Bot b : bots) {
            // read and completed together: an append answered late may still have been stored after a first read (409)
            long last = retry(reconcileBy, () -> {
                JsonNode now = get("/api/streams/" + b.id, b.producer.user);
                long held = now.get("lastSeq").asLong();
                if ("open".equals(now.path("state").asString())) {
                    // (a complete whose answer was lost finds the stream complete on the next try)
                    post("/api/streams/" + b.id + "/complete", b.producer.user, Map.of("lastSeq", held));
                }
                return held;
            });
            b.storedAtEnd = last;
            stored += last;
            acked += b.acked.get();
            if (b.acked.get() > last) {
                count("acknowledged but not held at the end");
                lost += b.acked.get() - last;
            }
        }
        for (Bot b : bots) {
            for (Reader r : b.readers) {
                while (System.nanoTime() < reconcileBy && !r.done(b.storedAtEnd)) {
                    TimeUnit.MILLISECONDS.sleep(50);
                }
                synchronized (r) {
                    lost += r.cursor.gaps + Math.max(0, b.storedAtEnd + 1 - r.cursor.next);
                    if (r.cursor.next - 1 > b.storedAtEnd) {
                        count("read chunks the server does not hold at the end");
                        lost += r.cursor.next - 1 - b.storedAtEnd;
                    }
                    duplicates += r.cursor.duplicates;
                }
            }
        }
        long reconnects = peers.stream().mapToLong(p -> Math.max(0, p.connects.get() - 1)).sum();
        Map<String, Long> answers = new TreeMap<>();
        seen.forEach((k, v) -> answers.put(k, v.sum()));
        return new Result(bots.size(), stored, acked, lost, duplicates, reconnects, answers);
    }

    private void count(String what) {
        seen.computeIfAbsent(what, k -> new LongAdder()).increment();
    }

    /** Every 10 ms: appends that are due, retries of unanswered ones, pings of quiet connections. */
    private void tick() {
        long interval = (long) (1e9 / chunksPerSecond);
        long now = System.nanoTime();
        for (Bot b : bots) {
            b.nextDue = now;
        }
        while (running) {
            now = System.nanoTime();
            for (Bot b : bots) {
                // the frame is made under the bot's lock and written outside it: a write that waits for
                // room must not hold up the event loop that hands the bot its answers
                String frame = b.tick(now, interval);
                if (frame != null) {
                    b.producer.send(frame);
                }
            }
            for (Peer p : peers) {
                if (now - p.lastWrite > TimeUnit.SECONDS.toNanos(5)) {
                    p.send("{\"type\":\"ping\"}");
                }
            }
            for (Bot b : bots) {
                for (Reader r : b.readers) {
                    if (r.resubscribeDue(now)) {
                        r.subscribe();
                    }
                }
            }
            try {
                TimeUnit.MILLISECONDS.sleep(10);
            }
            catch (InterruptedException e) {
                return;
            }
        }
    }

    /** One bot's stream, as its producer keeps it. */
    final class Bot {
        final String id;
        final Peer producer;
        final List<Reader> readers = new ArrayList<>();
        final AtomicLong acked = new AtomicLong();
        /** The seq in flight (0: none), when it was sent, and on which connection. */
        volatile long inFlight;
        long sentAt;
        WsLink sentOn;
        long retryAt;
        long nextDue;
        long storedAtEnd;

        Bot(String id, Peer producer) {
            this.id = id;
            this.producer = producer;
        }

        /** The append frame due now (a new chunk, or the one in flight again), or null. */
        synchronized String tick(long now, long interval) {
            WsLink link = producer.link;
            if (link == null) {
                return null;
            }
            if (inFlight != 0) {
                if (closing) {
                    return null;
                }
                if (now - sentAt > TimeUnit.SECONDS.toNanos(5) || sentOn != link) {
                    count("append retried");
                    return append(inFlight, now, link);
                }
                return null;
            }
            if (!appending || now < retryAt || now < nextDue) {
                return null;
            }
            nextDue = Math.max(nextDue + interval, now - TimeUnit.SECONDS.toNanos(1));
            return append(acked.get() + 1, now, link);
        }

        private String append(long seq, long now, WsLink link) {
            inFlight = seq;
            sentAt = now;
            sentOn = link;
            return "{\"type\":\"append\",\"streamId\":\"" + id + "\",\"correlationId\":\"" + seq
                    + "\",\"chunks\":[{\"seq\":" + seq + ",\"data\":\"" + data(seq) + "\"}]}";
        }

        synchronized void frame(JsonNode f) {
            switch (f.path("type").asString()) {
                case "appended" -> {
                    if (id.equals(f.path("streamId").asString())) {
                        acked.accumulateAndGet(f.path("lastSeq").asLong(), Math::max);
                        inFlight = 0;
                    }
                }
                case "error" -> {
                    if (!id.equals(f.path("streamId").asString(null))) {
                        count("error " + f.path("code").asString());
                        return;
                    }
                    String code = f.path("code").asString();
                    count("append " + code);
                    JsonNode expected = f.get("expectedSeq");
                    if (expected != null) {
                        // the server holds everything below the seq it expects, whatever answers were lost
                        acked.accumulateAndGet(expected.asLong() - 1, Math::max);
                    }
                    inFlight = 0;
                    retryAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200);
                }
                default -> {
                }
            }
        }
    }

    static String data(long seq) {
        StringBuilder b = new StringBuilder("c").append(seq).append('-');
        while (b.length() < 32) {
            b.append('x');
        }
        return b.toString();
    }

    /** One reader of a stream: the next seq it expects, and what it saw out of order. */
    final class Reader {
        final String stream;
        final Peer peer;
        final SeqCursor cursor = new SeqCursor(1);
        String state;
        long stateLastSeq;
        /** When a refused subscription is to be asked for again (0: none refused). */
        long resubscribeAt;

        Reader(String stream, Peer peer) {
            this.stream = stream;
            this.peer = peer;
        }

        void subscribe() {
            long from;
            synchronized (this) {
                from = cursor.next;
            }
            peer.send("{\"type\":\"subscribe\",\"streamId\":\"" + stream + "\",\"fromSeq\":" + from + "}");
        }

        synchronized void frame(JsonNode f) {
            if (!stream.equals(f.path("streamId").asString(null))) {
                return;
            }
            switch (f.path("type").asString()) {
                case "chunk" -> {
                    long seq = f.path("seq").asLong();
                    if (cursor.take(seq) && !data(seq).equals(f.path("data").asString(null))) {
                        count("chunk with other data");
                        cursor.gaps++;
                    }
                }
                case "stream" -> {
                    state = f.path("state").asString();
                    stateLastSeq = f.path("lastSeq").asLong();
                }
                case "error" -> {
                    // the subscription was refused (unavailable, rate_limited, overloaded) and is not held: ask again shortly
                    count("subscribe " + f.path("code").asString());
                    resubscribeAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
                }
                default -> {
                }
            }
        }

        synchronized boolean resubscribeDue(long now) {
            if (resubscribeAt != 0 && now >= resubscribeAt && peer.link != null) {
                resubscribeAt = 0;
                return true;
            }
            return false;
        }

        synchronized boolean done(long last) {
            return "complete".equals(state) && stateLastSeq == last && cursor.next >= last + 1;
        }
    }

    /**
     * One user's connection, kept open: reconnects (to the next node when its own does not answer)
     * and acks its messages. Each attempt has its own {@link Attempt}, and only the attempt that is
     * the current link may change the peer's state: a link that arrives after its attempt timed out
     * is closed, and its events are ignored.
     */
    final class Peer {
        final String user;
        final String token;
        int node;
        volatile WsLink link;
        volatile long lastWrite = System.nanoTime();
        final AtomicLong connects = new AtomicLong();
        volatile java.util.function.Consumer<JsonNode> onFrame = f -> { };
        volatile Runnable onConnected = () -> { };
        final Object closed = new Object();

        Peer(String user, int node) {
            this.user = user;
            this.token = token(user);
            this.node = node % bases.size();
        }

        /** One connection attempt and, once it is the peer's link, that connection's events. */
        final class Attempt implements WsLink.Events {
            final CompletableFuture<Void> welcome = new CompletableFuture<>();
            volatile WsLink own;
            volatile boolean abandoned;
            /** Set first thing on close, so that a close racing the attempt's success is seen by one side or the other. */
            volatile boolean ended;

            @Override
            public void onText(String frame) {
                JsonNode f = LoadRun.JSON.readTree(frame);
                switch (f.path("type").asString()) {
                    case "welcome" -> welcome.complete(null);
                    case "message" -> sendOn(own, "{\"type\":\"ack\",\"ids\":[" + f.path("deliveryId").asLong() + "]}");
                    default -> {
                        if (own != null && own == link) {
                            onFrame.accept(f);
                        }
                    }
                }
            }

            @Override
            public void onClose(int code) {
                ended = true;
                welcome.completeExceptionally(new IllegalStateException("closed " + code));
                if (own == null || own != link) {
                    return;   // an attempt that never became the link, or an old one
                }
                if (running) {
                    count("close " + code);
                }
                link = null;
                synchronized (closed) {
                    closed.notifyAll();
                }
            }
        }

        void keepConnected() {
            while (running) {
                if (link == null) {
                    Attempt a = new Attempt();
                    CompletableFuture<WsLink> opening = null;
                    try {
                        URI uri = URI.create(bases.get(node).replaceFirst("^http", "ws") + "/ws");
                        opening = connector.connect(uri, token, a);
                        WsLink l = opening.get(10, TimeUnit.SECONDS);
                        a.own = l;
                        a.welcome.get(10, TimeUnit.SECONDS);
                        connects.incrementAndGet();
                        link = l;
                        if (a.ended) {
                            // closed between its welcome and now: its close found no link to clear
                            link = null;
                            continue;
                        }
                        onConnected.run();
                    }
                    catch (Exception e) {
                        a.abandoned = true;
                        WsLink l = a.own;
                        if (l != null) {
                            l.close("failed");
                        }
                        else {
                            node = (node + 1) % bases.size();
                            if (opening != null) {
                                // a link that opens after its attempt gave up is closed, not left open beside the next one
                                opening.whenComplete((late, err) -> {
                                    if (late != null) {
                                        late.close("abandoned");
                                    }
                                });
                            }
                        }
                        count("connect " + e.getClass().getSimpleName());
                        pause(500);
                        continue;
                    }
                }
                synchronized (closed) {
                    if (link != null && running) {
                        try {
                            closed.wait(1000);
                        }
                        catch (InterruptedException e) {
                            return;
                        }
                    }
                }
            }
        }

        void send(String frame) {
            sendOn(link, frame);
        }

        private void sendOn(WsLink l, String frame) {
            if (l == null) {
                return;
            }
            try {
                l.send(frame);
                lastWrite = System.nanoTime();
            }
            catch (Exception e) {
                count("write " + e.getClass().getSimpleName());
            }
        }

        void close() {
            WsLink l = link;
            if (l != null) {
                l.close("done");
            }
        }
    }

    private static void pause(long millis) {
        try {
            TimeUnit.MILLISECONDS.sleep(millis);
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    interface Call<T> {
        T call() throws Exception;
    }

    /** A REST call retried until it succeeds or the deadline passes (a fault may still be healing). */
    private <T> T retry(long deadline, Call<T> call) throws Exception {
        while (true) {
            try {
                return call.call();
            }
            catch (Exception e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                count("REST retried");
                TimeUnit.MILLISECONDS.sleep(500);
            }
        }
    }

    private String token(String user) {
        try {
            SignedJWT jwt = new SignedJWT(new JWSHeader(JWSAlgorithm.HS256), new JWTClaimsSet.Builder()
                    .subject(user).expirationTime(java.util.Date.from(Instant.now().plus(Duration.ofDays(1)))).build());
            jwt.sign(new MACSigner(jwtSecret.getBytes(StandardCharsets.UTF_8)));
            return jwt.serialize();
        }
        catch (Exception e) {
            throw new IllegalStateException("could not mint a token", e);
        }
    }

    private JsonNode post(String path, String user, Object body) throws Exception {
        return call(HttpRequest.newBuilder(URI.create(bases.getFirst() + path)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(LoadRun.JSON.writeValueAsString(body))), user);
    }

    private JsonNode get(String path, String user) throws Exception {
        return call(HttpRequest.newBuilder(URI.create(bases.getFirst() + path)).GET(), user);
    }

    private JsonNode call(HttpRequest.Builder b, String user) throws Exception {
        HttpResponse<String> r = http.send(b.timeout(Duration.ofSeconds(30)).header("Authorization", "Bearer " + token(user)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() / 100 != 2) {
            throw new IllegalStateException(r.request().uri() + " answered " + r.statusCode() + " " + r.body());
        }
        return LoadRun.JSON.readTree(r.body());
    }
}
