package dev.waterline.streams;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import dev.waterline.support.Api;
import dev.waterline.support.Cluster;
import dev.waterline.support.StreamClient;
import dev.waterline.support.WsClient;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

import static dev.waterline.support.StreamClient.chunks;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Streams across the nodes of a cluster (PROTOCOL.md §6, §8): a producer on one node, readers on
 * another, over WebSocket and server-sent events, see every chunk in order once; the reading node
 * reads each chunk from PostgreSQL once whatever its subscribers; and when every Redis signal
 * from the producer's node is lost, the head poll still brings every chunk.
 */
class CrossNodeStreamsIntegrationTests {

    static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void chunksAppendedOnOneNodeReachReadersOnAnotherInOrderOnceAndReadFromPostgresOncePerNode() throws Exception {
        try (Cluster cluster = new Cluster("cluster_streams", 31)) {
            ConfigurableApplicationContext one = cluster.start("streams-one");
            ConfigurableApplicationContext two = cluster.start("streams-two");
            Api onOne = new Api(Cluster.port(one));
            Api onTwo = new Api(Cluster.port(two));
            String producer = onOne.token("xs-producer");
            String[] readers = {"xs-r0", "xs-r1", "xs-r2", "xs-r3"};
            String chat = onOne.createChat(producer, readers);
            StreamClient producing = new StreamClient(onOne);
            String id = producing.open(producer, chat).get("streamId").asString();
            producing.append(producer, id, chunks(1, 100, "x"));

            List<WsClient> ws = new java.util.ArrayList<>();
            try {
                for (String r : readers) {
                    WsClient c = WsClient.connectWelcomed(Cluster.port(two), onTwo.token(r));
                    c.send(Map.of("type", "subscribe", "streamId", id, "fromSeq", 1));
                    c.next(f -> "chunk".equals(f.path("type").asString()) && f.path("seq").asLong() == 100, WAIT);
                    ws.add(c);
                }
                StreamClient.Events sse = new StreamClient(onTwo).events(id, "fromSeq=50",
                        Map.of("Authorization", "Bearer " + onTwo.token(readers[0])));
                try (sse) {
                    sse.awaitAtLeast(51, WAIT);
                    double readsBefore = counter(two, "waterline.stream.tail.read.chunks");
                    for (long s = 101; s <= 600; s += 5) {
                        assertThat(producing.append(producer, id, chunks(s, s + 4, "x")).status()).isEqualTo(200);
                    }
                    producing.complete(producer, id, 600);

                    for (WsClient c : ws) {
                        assertThat(StreamsLiveIntegrationTests.chunksUntilClosed(c, id))
                                .containsExactlyElementsOf(StreamsLiveIntegrationTests.range(1, 600));
                    }
                    assertThat(sse.awaitEnd(WAIT).stream().filter(e -> "chunk".equals(e.event())).map(e -> Long.parseLong(e.id())))
                            .containsExactlyElementsOf(StreamsLiveIntegrationTests.range(50, 600));
                    // five readers on node two: each of the 500 new chunks read from PostgreSQL once there
                    assertThat(counter(two, "waterline.stream.tail.read.chunks") - readsBefore).isEqualTo(500);
                }
            }
            finally {
                ws.forEach(WsClient::close);
            }
        }
    }

    @Test
    void whenEverySignalFromTheProducersNodeIsLostTheHeadPollStillBringsEveryChunk() {
        try (Cluster cluster = new Cluster("cluster_streams_lost", 32)) {
            ConfigurableApplicationContext one = cluster.start("lost-one");
            ConfigurableApplicationContext two = cluster.start("lost-two", "--waterline.streams.tail-poll-interval=200ms");
            AtomicInteger lost = new AtomicInteger();
            two.getBean(StreamSignals.class).listen(signals -> lost.addAndGet(signals.size()));
            Api onOne = new Api(Cluster.port(one));
            Api onTwo = new Api(Cluster.port(two));
            Api.Pair p = onOne.pair("xs-lost");
            StreamClient producing = new StreamClient(onOne);
            String id = producing.open(p.alice(), p.chat()).get("streamId").asString();
            try (WsClient bob = WsClient.connectWelcomed(Cluster.port(two), p.bob())) {
                bob.send(Map.of("type", "subscribe", "streamId", id, "fromSeq", 1));
                bob.next("stream");
                for (long s = 1; s <= 300; s += 3) {
                    assertThat(producing.append(p.alice(), id, chunks(s, s + 2, "l")).status()).isEqualTo(200);
                }
                producing.complete(p.alice(), id, 300);

                assertThat(StreamsLiveIntegrationTests.chunksUntilClosed(bob, id))
                        .containsExactlyElementsOf(StreamsLiveIntegrationTests.range(1, 300));
                assertThat(lost.get()).as("node two was signalled, and dropped every signal").isPositive();
            }
        }
    }

    static double counter(ConfigurableApplicationContext ctx, String name) {
        var c = ctx.getBean(MeterRegistry.class).find(name).counter();
        return c == null ? 0 : c.count();
    }
}
