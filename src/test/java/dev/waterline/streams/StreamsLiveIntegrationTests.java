package dev.waterline.streams;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;

import dev.waterline.support.Api;
import dev.waterline.support.StreamClient;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.JsonNode;

import static dev.waterline.support.StreamClient.chunk;
import static dev.waterline.support.StreamClient.chunks;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * PROTOCOL.md §6, read live: WebSocket subscriptions and server-sent events, replay from any seq
 * joined to the live tail, the {@code append} frame, and the dev echo bot.
 */
@WaterlineIntegrationTest
class StreamsLiveIntegrationTests {

    static final Duration WAIT = Duration.ofSeconds(30);

    @LocalServerPort
    int port;

    @Autowired
    MeterRegistry meters;

    Api api;
    StreamClient streams;

    @BeforeEach
    void setUp() {
        api = new Api(port);
        streams = new StreamClient(api);
    }

    static void subscribe(WsClient ws, String streamId, long fromSeq) {
        ws.send(Map.of("type", "subscribe", "streamId", streamId, "fromSeq", fromSeq));
    }

    /** Waits for the stream's final state frame on {@code ws}; returns the seqs of its chunk frames, in arrival order. */
    static List<Long> chunksUntilClosed(WsClient ws, String streamId) {
        ws.next(f -> "stream".equals(f.path("type").asString()) && streamId.equals(f.path("streamId").asString())
                && !"open".equals(f.path("state").asString()), WAIT);
        return seqs(ws, streamId);
    }

    static List<Long> seqs(WsClient ws, String streamId) {
        List<Long> out = new ArrayList<>();
        for (JsonNode f : ws.received()) {
            if ("chunk".equals(f.path("type").asString()) && streamId.equals(f.path("streamId").asString())) {
                out.add(f.get("seq").asLong());
            }
        }
        return out;
    }

    static List<Long> range(long from, long to) {
        List<Long> out = new ArrayList<>();
        for (long s = from; s <= to; s++) {
            out.add(s);
        }
        return out;
    }

    double counter(String name) {
        var c = meters.find(name).counter();
        return c == null ? 0 : c.count();
    }

    @Test
    void aSubscriberIsSentTheStateThenEveryChunkInOrderThenTheFinalState() {
        Api.Pair p = api.pair("sl-order");
        String id = streams.open(p.alice(), p.chat()).get("streamId").asString();
        try (WsClient bob = WsClient.connectWelcomed(port, p.bob())) {
            subscribe(bob, id, 1);
            JsonNode first = bob.next("stream");
            assertThat(first.get("streamId").asString()).isEqualTo(id);
            assertThat(first.get("state").asString()).isEqualTo("open");
            assertThat(first.get("lastSeq").asLong()).isZero();

            for (int i = 0; i < 10; i++) {
                assertThat(streams.append(p.alice(), id, chunks(i * 5 + 1, i * 5 + 5, "o")).status()).isEqualTo(200);
            }
            streams.complete(p.alice(), id, 50);

            assertThat(chunksUntilClosed(bob, id)).containsExactlyElementsOf(range(1, 50));
            List<JsonNode> frames = bob.received().stream()
                    .filter(f -> id.equals(f.path("streamId").asString())).toList();
            assertThat(frames.getFirst().get("type").asString()).isEqualTo("stream");
            JsonNode last = frames.getLast();
            assertThat(last.get("type").asString()).isEqualTo("stream");
            assertThat(last.get("state").asString()).isEqualTo("complete");
            assertThat(last.get("lastSeq").asLong()).isEqualTo(50);
            JsonNode c7 = frames.stream().filter(f -> f.path("seq").asLong() == 7 && "chunk".equals(f.path("type").asString()))
                    .findFirst().orElseThrow();
            assertThat(c7.get("data").asString()).isEqualTo("o7");
            assertThat(c7.get("at").asString()).endsWith("Z");
        }
    }

    @Test
    void aLateSubscriberReplaysEverythingExactlyOnceThenFollowsTheLiveTail() {
        Api.Pair p = api.pair("sl-late");
        String id = streams.open(p.alice(), p.chat()).get("streamId").asString();
        for (int i = 0; i < 25; i++) {
            streams.append(p.alice(), id, chunks(i * 100 + 1, i * 100 + 100, "late"));
        }
        try (WsClient bob = WsClient.connectWelcomed(port, p.bob())) {
            subscribe(bob, id, 1);
            bob.next(f -> "chunk".equals(f.path("type").asString()) && f.path("seq").asLong() == 2500, WAIT);
            streams.append(p.alice(), id, chunks(2501, 2600, "late"));
            streams.complete(p.alice(), id, 2600);

            assertThat(chunksUntilClosed(bob, id)).containsExactlyElementsOf(range(1, 2600));
        }
    }

    @Test
    void aReaderThatReloadsMidStreamResumesAtFromSeqAndMissesNothing() {
        Api.Pair p = api.pair("sl-reload");
        String id = streams.open(p.alice(), p.chat()).get("streamId").asString();
        streams.append(p.alice(), id, chunks(1, 30, "r"));
        long lastSeen;
        try (WsClient bob = WsClient.connectWelcomed(port, p.bob())) {
            subscribe(bob, id, 1);
            bob.next(f -> "chunk".equals(f.path("type").asString()) && f.path("seq").asLong() == 30, WAIT);
            lastSeen = seqs(bob, id).getLast();
        }
        streams.append(p.alice(), id, chunks(31, 40, "r"));
        try (WsClient again = WsClient.connectWelcomed(port, p.bob())) {
            subscribe(again, id, lastSeen + 1);
            JsonNode state = again.next("stream");
            assertThat(state.get("lastSeq").asLong()).isEqualTo(40);
            streams.append(p.alice(), id, chunks(41, 45, "r"));
            streams.complete(p.alice(), id, 45);

            assertThat(chunksUntilClosed(again, id)).containsExactlyElementsOf(range(31, 45));
        }
    }

    @Test
    void subscribingToAClosedStreamReplaysItAndEndsWithItsFinalState() {
        Api.Pair p = api.pair("sl-closed");
        String id = streams.open(p.alice(), p.chat()).get("streamId").asString();
        streams.append(p.alice(), id, chunks(1, 12, "c"));
        streams.abort(p.alice(), id, "stopped");
        try (WsClient bob = WsClient.connectWelcomed(port, p.bob())) {
            subscribe(bob, id, 5);
            assertThat(bob.next("stream").get("state").asString()).isEqualTo("aborted");
            bob.next("stream");   // the final state, after the replay

            assertThat(seqs(bob, id)).containsExactlyElementsOf(range(5, 12));
            List<JsonNode> states = bob.received().stream().filter(f -> "stream".equals(f.path("type").asString())).toList();
            assertThat(states).extracting(f -> f.get("state").asString()).containsExactly("aborted", "aborted");
        }
    }

    @Test
    void manySubscribersJoiningWhileChunksAreAppendedEachSeeEverySeqOnceInOrder() throws Exception {
        int readers = 12;
        String producer = api.token("sl-seam-p");
        List<String> members = new ArrayList<>();
        List<String> tokens = new ArrayList<>();
        for (int i = 0; i < readers; i++) {
            members.add("sl-seam-r" + i);
            tokens.add(api.token("sl-seam-r" + i));
        }
        String chat = api.createChat(producer, members.toArray(String[]::new));
        String id = streams.open(producer, chat).get("streamId").asString();
        int total = 3000;
        List<WsClient> clients = new ArrayList<>();
        List<Long> from = new ArrayList<>();
        ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor();
        // the producer reports its progress at every milestone, and one reader joins at each: the
        // joins fall while chunks are being appended, all along the stream
        BlockingQueue<Long> milestones = new LinkedBlockingQueue<>();
        try {
            Future<?> writing = pool.submit(() -> {
                long seq = 0;
                long next = total / (readers + 1);
                while (seq < total) {
                    int n = 1 + ThreadLocalRandom.current().nextInt(5);
                    long to = Math.min(total, seq + n);
                    Api.Response r = streams.append(producer, id, chunks(seq + 1, to, "s"));
                    assertThat(r.status()).isEqualTo(200);
                    seq = to;
                    if (seq >= next) {
                        milestones.add(seq);
                        next += total / (readers + 1);
                    }
                }
                streams.complete(producer, id, total);
                return null;
            });
            for (int i = 0; i < readers; i++) {
                Long reached = milestones.poll(60, TimeUnit.SECONDS);
                assertThat(reached).as("the producer's progress").isNotNull();
                WsClient ws = WsClient.connectWelcomed(port, tokens.get(i));
                // from the start, from just behind the head, or from beyond it
                long f = i % 3 == 0 ? 1 : Math.max(1, reached - 40 + ThreadLocalRandom.current().nextInt(80));
                subscribe(ws, id, f);
                clients.add(ws);
                from.add(f);
            }
            writing.get();
            for (int i = 0; i < readers; i++) {
                assertThat(chunksUntilClosed(clients.get(i), id)).as("reader " + i + " from " + from.get(i))
                        .containsExactlyElementsOf(range(from.get(i), total));
            }
        }
        finally {
            clients.forEach(WsClient::close);
            pool.shutdownNow();
        }
    }

    @Test
    void aLocalProducersChunksReachEverySubscriberWithoutTheTailReadingThemAgain() {
        int readers = 30;
        String producer = api.token("sl-fan-p");
        List<String> members = new ArrayList<>();
        for (int i = 0; i < readers; i++) {
            members.add("sl-fan-r" + i);
        }
        String chat = api.createChat(producer, members.toArray(String[]::new));
        String id = streams.open(producer, chat).get("streamId").asString();
        List<WsClient> clients = new ArrayList<>();
        try {
            for (String m : members) {
                WsClient ws = WsClient.connectWelcomed(port, api.token(m));
                subscribe(ws, id, 1);
                ws.next("stream");
                clients.add(ws);
            }
            // every subscriber has joined the tail once its replay of the empty stream is done:
            // wait for one chunk to reach all of them before counting
            streams.append(producer, id, chunks(1, 1, "f"));
            for (WsClient ws : clients) {
                ws.next(f -> "chunk".equals(f.path("type").asString()) && f.path("seq").asLong() == 1, WAIT);
            }
            double readsBefore = counter("waterline.stream.tail.reads");
            double handedBefore = counter("waterline.stream.handover.chunks");
            for (int i = 0; i < 20; i++) {
                streams.append(producer, id, chunks(i * 10 + 2, i * 10 + 11, "f"));
            }
            streams.complete(producer, id, 201);
            for (WsClient ws : clients) {
                assertThat(chunksUntilClosed(ws, id)).containsExactlyElementsOf(range(1, 201));
            }
            assertThat(counter("waterline.stream.tail.reads") - readsBefore)
                    .as("no chunk is read from PostgreSQL for the tail: the appender hands them over").isZero();
            assertThat(counter("waterline.stream.handover.chunks") - handedBefore)
                    .as("each chunk handed over once, whatever the number of subscribers").isEqualTo(200);
        }
        finally {
            clients.forEach(WsClient::close);
        }
    }

    @Test
    void concurrentProducersOnManyStreamsKeepEveryStreamInOrder() throws Exception {
        int n = 16;
        List<String> producers = new ArrayList<>();
        List<String> ids = new ArrayList<>();
        String reader = api.token("sl-many-reader");
        for (int i = 0; i < n; i++) {
            String t = api.token("sl-many-p" + i);
            producers.add(t);
            ids.add(streams.open(t, api.createChat(t, "sl-many-reader")).get("streamId").asString());
        }
        try (WsClient ws = WsClient.connectWelcomed(port, reader)) {
            for (String id : ids) {
                subscribe(ws, id, 1);
                ws.next(f -> "stream".equals(f.path("type").asString()) && id.equals(f.path("streamId").asString()), WAIT);
            }
            ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor();
            List<Future<?>> writers = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                String t = producers.get(i);
                String id = ids.get(i);
                writers.add(pool.submit(() -> {
                    long seq = 0;
                    while (seq < 300) {
                        long to = Math.min(300, seq + 1 + ThreadLocalRandom.current().nextInt(4));
                        assertThat(streams.append(t, id, chunks(seq + 1, to, id + ":")).status()).isEqualTo(200);
                        seq = to;
                    }
                    streams.complete(t, id, 300);
                    return null;
                }));
            }
            for (Future<?> w : writers) {
                w.get();
            }
            pool.shutdown();
            for (String id : ids) {
                assertThat(chunksUntilClosed(ws, id)).as(id).containsExactlyElementsOf(range(1, 300));
                assertThat(streams.readAll(reader, id, 1, 1000)).extracting(c -> c.get("data").asString())
                        .containsExactlyElementsOf(range(1, 300).stream().map(s -> id + ":" + s).toList());
            }
        }
    }

    @Test
    void unsubscribingStopsTheFramesOfThatStreamOnly() {
        Api.Pair p = api.pair("sl-unsub");
        String a = streams.open(p.alice(), p.chat()).get("streamId").asString();
        String b = streams.open(p.alice(), p.chat()).get("streamId").asString();
        try (WsClient bob = WsClient.connectWelcomed(port, p.bob())) {
            subscribe(bob, a, 1);
            subscribe(bob, b, 1);
            streams.append(p.alice(), a, chunks(1, 1, "a"));
            bob.next(f -> "chunk".equals(f.path("type").asString()) && a.equals(f.path("streamId").asString()), WAIT);
            bob.send(Map.of("type", "unsubscribe", "streamId", a));
            bob.send(Map.of("type", "ping"));
            bob.next("pong");
            streams.append(p.alice(), a, chunks(2, 3, "a"));
            streams.append(p.alice(), b, chunks(1, 1, "b"));
            streams.complete(p.alice(), b, 1);

            assertThat(chunksUntilClosed(bob, b)).containsExactly(1L);
            assertThat(seqs(bob, a)).containsExactly(1L);
        }
    }

    @Test
    void anAppendFrameIsAnsweredAppendedOrWithItsRefusal() {
        Api.Pair p = api.pair("sl-wsappend");
        String eve = api.token("sl-wsappend-eve");
        String id = streams.open(p.alice(), p.chat()).get("streamId").asString();
        try (WsClient alice = WsClient.connectWelcomed(port, p.alice());
             WsClient bob = WsClient.connectWelcomed(port, p.bob());
             WsClient stranger = WsClient.connectWelcomed(port, eve)) {
            alice.send(Map.of("type", "append", "streamId", id, "correlationId", "a1", "chunks", chunks(1, 2, "w")));
            JsonNode ok = alice.next(f -> "a1".equals(f.path("correlationId").asString()), WAIT);
            assertThat(ok.get("type").asString()).isEqualTo("appended");
            assertThat(ok.get("streamId").asString()).isEqualTo(id);
            assertThat(ok.get("lastSeq").asLong()).isEqualTo(2);

            alice.send(Map.of("type", "append", "streamId", id, "correlationId", "a2", "chunks", chunks(4, 4, "w")));
            JsonNode gap = alice.next(f -> "a2".equals(f.path("correlationId").asString()), WAIT);
            assertThat(gap.get("type").asString()).isEqualTo("error");
            assertThat(gap.get("code").asString()).isEqualTo("gap");
            assertThat(gap.get("expectedSeq").asLong()).isEqualTo(3);
            assertThat(gap.get("streamId").asString()).isEqualTo(id);

            alice.send(Map.of("type", "append", "streamId", id, "correlationId", "a3", "chunks", List.of(chunk(2, "other"))));
            assertThat(alice.next(f -> "a3".equals(f.path("correlationId").asString()), WAIT).get("code").asString()).isEqualTo("conflict");
            alice.send(Map.of("type", "append", "streamId", id, "correlationId", "a4", "chunks", List.of(chunk(3, "x".repeat(16385)))));
            assertThat(alice.next(f -> "a4".equals(f.path("correlationId").asString()), WAIT).get("code").asString()).isEqualTo("too_large");
            alice.send(Map.of("type", "append", "streamId", id, "correlationId", "a5", "chunks", "nope"));
            assertThat(alice.next(f -> "a5".equals(f.path("correlationId").asString()), WAIT).get("code").asString()).isEqualTo("invalid");
            alice.send(Map.of("type", "append", "chunks", chunks(3, 3, "w")));
            assertThat(alice.next("error").get("code").asString()).isEqualTo("invalid");

            bob.send(Map.of("type", "append", "streamId", id, "correlationId", "b1", "chunks", chunks(3, 3, "w")));
            assertThat(bob.next(f -> "b1".equals(f.path("correlationId").asString()), WAIT).get("code").asString()).isEqualTo("forbidden");
            stranger.send(Map.of("type", "append", "streamId", id, "correlationId", "e1", "chunks", chunks(3, 3, "w")));
            assertThat(stranger.next(f -> "e1".equals(f.path("correlationId").asString()), WAIT).get("code").asString()).isEqualTo("not_found");

            streams.complete(p.alice(), id, 2);
            alice.send(Map.of("type", "append", "streamId", id, "correlationId", "a6", "chunks", chunks(3, 3, "w")));
            assertThat(alice.next(f -> "a6".equals(f.path("correlationId").asString()), WAIT).get("code").asString()).isEqualTo("closed");

            alice.send(Map.of("type", "ping"));
            assertThat(alice.next("pong")).isNotNull();
            assertThat(streams.readAll(p.bob(), id, 1, 100)).extracting(c -> c.get("data").asString()).containsExactly("w1", "w2");
        }
    }

    @Test
    void aSubscribeToAStreamTheReaderMayNotSeeIsNotFoundAndBadSubscribesAreInvalid() {
        Api.Pair p = api.pair("sl-subbad");
        String eve = api.token("sl-subbad-eve");
        String id = streams.open(p.alice(), p.chat()).get("streamId").asString();
        try (WsClient stranger = WsClient.connectWelcomed(port, eve)) {
            subscribe(stranger, id, 1);
            JsonNode e = stranger.next("error");
            assertThat(e.get("code").asString()).isEqualTo("not_found");
            assertThat(e.get("streamId").asString()).isEqualTo(id);
            subscribe(stranger, "01ARZ3NDEKTSV4RRFFQ69G5FAV", 1);
            assertThat(stranger.next("error").get("code").asString()).isEqualTo("not_found");
            stranger.send(Map.of("type", "subscribe", "streamId", id, "fromSeq", 0));
            assertThat(stranger.next("error").get("code").asString()).isEqualTo("invalid");
            stranger.send(Map.of("type", "subscribe", "streamId", id, "fromSeq", "1"));
            assertThat(stranger.next("error").get("code").asString()).isEqualTo("invalid");
            stranger.send(Map.of("type", "subscribe", "streamId", 7));
            assertThat(stranger.next("error").get("code").asString()).isEqualTo("invalid");
            stranger.send(Map.of("type", "ping"));
            assertThat(stranger.next("pong")).isNotNull();
        }
        streams.append(p.alice(), id, chunks(1, 1, "x"));
        try (WsClient bob = WsClient.connectWelcomed(port, p.bob())) {
            bob.send(Map.of("type", "subscribe", "streamId", id));
            assertThat(bob.next("stream").get("lastSeq").asLong()).isEqualTo(1);
            assertThat(bob.next("chunk").get("seq").asLong()).isEqualTo(1);
        }
    }

    @Test
    void serverSentEventsFollowAStreamResumeAfterLastEventIdAndEndWithTheFinalState() {
        Api.Pair p = api.pair("sl-sse");
        String id = streams.open(p.alice(), p.chat()).get("streamId").asString();
        streams.append(p.alice(), id, chunks(1, 5, "e"));
        try (StreamClient.Events first = streams.events(id, null, Map.of("Authorization", "Bearer " + p.bob()))) {
            assertThat(first.status()).isEqualTo(200);
            List<StreamClient.Event> got = first.awaitAtLeast(6, WAIT);
            assertThat(got.getFirst().event()).isEqualTo("stream");
            assertThat(Api.JSON.readTree(got.getFirst().data()).get("state").asString()).isEqualTo("open");
            assertThat(got.subList(1, 6)).extracting(StreamClient.Event::event).containsOnly("chunk");
            assertThat(got.subList(1, 6)).extracting(StreamClient.Event::id).containsExactly("1", "2", "3", "4", "5");
            assertThat(Api.JSON.readTree(got.get(3).data()).get("data").asString()).isEqualTo("e3");
        }
        streams.append(p.alice(), id, chunks(6, 8, "e"));
        try (StreamClient.Events resumed = streams.events(id, "fromSeq=1&access_token=" + p.bob(), Map.of("Last-Event-ID", "5"))) {
            assertThat(resumed.status()).isEqualTo(200);
            resumed.awaitAtLeast(4, WAIT);
            streams.append(p.alice(), id, chunks(9, 9, "e"));
            streams.complete(p.alice(), id, 9);

            List<StreamClient.Event> all = resumed.awaitEnd(WAIT);
            assertThat(all.stream().filter(e -> e.event().equals("chunk")).map(StreamClient.Event::id).toList())
                    .containsExactly("6", "7", "8", "9");
            StreamClient.Event last = all.getLast();
            assertThat(last.event()).isEqualTo("stream");
            assertThat(Api.JSON.readTree(last.data()).get("state").asString()).isEqualTo("complete");
            assertThat(resumed.ended()).isTrue();
        }
        try (StreamClient.Events fromQuery = streams.events(id, "fromSeq=8&access_token=" + p.bob(), Map.of())) {
            List<StreamClient.Event> all = fromQuery.awaitEnd(WAIT);
            assertThat(all.stream().filter(e -> e.event().equals("chunk")).map(StreamClient.Event::id).toList())
                    .containsExactly("8", "9");
        }
        assertThat(streams.events(id, "fromSeq=x&access_token=" + p.bob(), Map.of()).status()).isEqualTo(400);
        assertThat(streams.events(id, "access_token=forged", Map.of()).status()).isEqualTo(401);
    }

    @Test
    void theEchoBotJoinsTheChatAndStreamsItsReplyWordByWord() {
        Api.Pair p = api.pair("sl-echo");
        Api.Response r = api.post("/api/dev/bots/echo", p.alice(), Map.of("chatId", p.chat()));
        assertThat(r.status()).isEqualTo(201);
        String id = r.body().get("streamId").asString();
        assertThat(r.body().get("producerId").asString()).isEqualTo("echo-bot");
        try (StreamClient.Events events = streams.events(id, "access_token=" + p.bob(), Map.of())) {
            List<StreamClient.Event> all = events.awaitEnd(WAIT);
            String text = all.stream().filter(e -> e.event().equals("chunk"))
                    .map(e -> Api.JSON.readTree(e.data()).get("data").asString()).reduce("", String::concat);
            assertThat(text).startsWith("Hello from the echo bot.").endsWith("exactly once.");
            assertThat(Api.JSON.readTree(all.getLast().data()).get("state").asString()).isEqualTo("complete");
        }
        assertThat(api.post("/api/dev/bots/echo", api.token("sl-echo-eve"), Map.of("chatId", p.chat())).status()).isEqualTo(404);
        assertThat(api.post("/api/dev/bots/echo", p.alice(), Map.of()).status()).isEqualTo(400);
    }
}
