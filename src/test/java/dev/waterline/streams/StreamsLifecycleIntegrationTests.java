package dev.waterline.streams;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import dev.waterline.support.Api;
import dev.waterline.support.StreamClient;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.TestPropertySource;
import tools.jackson.databind.JsonNode;

import static dev.waterline.support.StreamClient.chunks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What happens to streams over time, in a context (and database) of its own: the idle abort, the
 * replay/tail seam with replay pages so small that a join spans many of them, and the chunk
 * partitions created ahead and dropped past retention (a pass as if a hundred days had gone by
 * drops every partition this database has, so no other test may share it).
 */
@WaterlineIntegrationTest
@TestPropertySource(properties = {
        "waterline.embedded.database=streams_lifecycle",
        "spring.data.redis.database=15",
        "waterline.streams.idle-timeout=1s",
        "waterline.streams.idle-check-interval=200ms",
        "waterline.streams.page-size=7"})
class StreamsLifecycleIntegrationTests {

    static final Duration WAIT = Duration.ofSeconds(30);

    @LocalServerPort
    int port;

    @Autowired
    ChunkPartitions partitions;

    @Autowired
    JdbcTemplate jdbc;

    @Autowired
    StreamProperties properties;

    @Autowired
    org.springframework.context.ApplicationContext context;

    Api api;
    StreamClient streams;

    @BeforeEach
    void setUp() {
        api = new Api(port);
        streams = new StreamClient(api);
    }

    @Test
    void aStreamLeftWithoutAppendsIsAbortedAndItsSubscribersAreToldSo() {
        Api.Pair p = api.pair("lc-idle");
        String id = streams.open(p.alice(), p.chat()).get("streamId").asString();
        assertThat(streams.append(p.alice(), id, chunks(1, 3, "i")).status()).isEqualTo(200);
        try (WsClient bob = WsClient.connectWelcomed(port, p.bob())) {
            bob.send(Map.of("type", "subscribe", "streamId", id, "fromSeq", 1));
            assertThat(bob.next("stream").get("state").asString()).isEqualTo("open");

            JsonNode closed = bob.next(f -> "stream".equals(f.path("type").asString()) && !"open".equals(f.path("state").asString()),
                    WAIT);
            assertThat(closed.get("state").asString()).isEqualTo("aborted");
            assertThat(closed.get("lastSeq").asLong()).isEqualTo(3);
            assertThat(StreamsLiveIntegrationTests.seqs(bob, id)).containsExactly(1L, 2L, 3L);
        }
        assertThat(api.get("/api/streams/" + id, p.alice()).body().get("state").asString()).isEqualTo("aborted");
        assertThat(jdbc.queryForObject("SELECT reason FROM streams WHERE stream_id = ?", String.class, id)).isEqualTo("idle");
        Api.Response late = streams.append(p.alice(), id, chunks(4, 4, "i"));
        assertThat(late.status()).isEqualTo(409);
        assertThat(late.body().get("error").asString()).isEqualTo("closed");
    }

    @Test
    void readersJoiningAcrossManySmallReplayPagesEachSeeEverySeqOnce() throws Exception {
        String producer = api.token("lc-pages-p");
        String first = api.token("lc-pages-a");
        String second = api.token("lc-pages-b");
        String chat = api.createChat(producer, "lc-pages-a", "lc-pages-b");
        Api.Pair p = new Api.Pair(producer, first, chat);
        String id = streams.open(p.alice(), p.chat()).get("streamId").asString();
        streams.append(p.alice(), id, chunks(1, 200, "p"));
        try (WsClient early = WsClient.connectWelcomed(port, first); WsClient mid = WsClient.connectWelcomed(port, second)) {
            early.send(Map.of("type", "subscribe", "streamId", id, "fromSeq", 1));
            // the second reader joins while the first replays (29 pages of 7) and while the producer goes on
            for (long s = 201; s <= 400; s += 10) {
                streams.append(p.alice(), id, chunks(s, s + 9, "p"));
                if (s == 251) {
                    mid.send(Map.of("type", "subscribe", "streamId", id, "fromSeq", 100));
                }
            }
            streams.complete(p.alice(), id, 400);
            assertThat(StreamsLiveIntegrationTests.chunksUntilClosed(early, id))
                    .containsExactlyElementsOf(StreamsLiveIntegrationTests.range(1, 400));
            assertThat(StreamsLiveIntegrationTests.chunksUntilClosed(mid, id))
                    .containsExactlyElementsOf(StreamsLiveIntegrationTests.range(100, 400));
        }
        StreamClient.Events sse = streams.events(id, "fromSeq=390", Map.of("Authorization", "Bearer " + p.bob()));
        try (sse) {
            List<StreamClient.Event> events = sse.awaitEnd(WAIT);
            assertThat(events.stream().filter(e -> "chunk".equals(e.event())).map(StreamClient.Event::id))
                    .containsExactly("390", "391", "392", "393", "394", "395", "396", "397", "398", "399", "400");
        }
    }

    List<String> partitionNames() {
        return jdbc.queryForList("""
                SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                WHERE i.inhparent = 'stream_chunks'::regclass ORDER BY 1
                """, String.class);
    }

    @Test
    void partitionsAreCreatedAheadAndDroppedPastRetentionAndAnAppendWithoutOneIsRefusedUntilTheyAreBack() {
        Instant now = jdbc.queryForObject("SELECT now()", java.sql.Timestamp.class).toInstant();
        ChunkPartitions.Pass today = partitions.maintain(now, Duration.ofDays(90));
        List<String> names = partitionNames();
        // the current day and three ahead (the defaults), created at start
        assertThat(names).contains(ChunkPartitions.name(now, Duration.ofDays(1)), ChunkPartitions.name(now.plus(Duration.ofDays(3)),
                Duration.ofDays(1)));
        assertThat(today.dropped()).isEmpty();

        Api.Pair p = api.pair("lc-part");
        String old = streams.open(p.alice(), p.chat()).get("streamId").asString();
        streams.append(p.alice(), old, chunks(1, 5, "old"));
        streams.complete(p.alice(), old, 5);

        // a hundred days on, keeping ninety: every partition of now is past retention, four new ones ahead
        Instant later = now.plus(Duration.ofDays(100));
        ChunkPartitions.Pass pass = partitions.maintain(later, Duration.ofDays(90));
        List<String> ahead = List.of(0, 1, 2, 3).stream()
                .map(k -> ChunkPartitions.name(later.plus(Duration.ofDays(k)), Duration.ofDays(1))).toList();
        Instant cutoff = later.minus(Duration.ofDays(90));
        List<String> past = names.stream().filter(n -> !ChunkPartitions.end(n).isAfter(cutoff)).toList();
        assertThat(past).contains(ChunkPartitions.name(now, Duration.ofDays(1)));
        assertThat(pass.dropped()).containsAll(past);
        assertThat(partitionNames()).containsAll(ahead).doesNotContainAnyElementsOf(past);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM streams WHERE stream_id = ?", Long.class, old))
                .as("a closed stream past retention is deleted").isZero();
        assertThat(api.get("/api/streams/" + old, p.alice()).status()).isEqualTo(404);

        // now has no partition: an append is refused whole, and the pass it wakes brings now back
        String fresh = streams.open(p.alice(), p.chat()).get("streamId").asString();
        Api.Response refused = streams.append(p.alice(), fresh, chunks(1, 3, "new"));
        assertThat(refused.status()).isEqualTo(503);
        assertThat(refused.body().get("error").asString()).isEqualTo("unavailable");
        assertThat(jdbc.queryForObject("SELECT last_seq FROM streams WHERE stream_id = ?", Long.class, fresh)).isZero();
        await().atMost(WAIT).until(() -> streams.append(p.alice(), fresh, chunks(1, 3, "new")).status() == 200);
        assertThat(streams.readAll(p.alice(), fresh, 1, 100)).extracting(c -> c.get("data").asString())
                .containsExactly("new1", "new2", "new3");
    }

    @Test
    void aChangedPartitionWidthFillsWhatTheOldPartitionsLeaveSoThatEveryHourHasExactlyOnePartition() {
        Instant now = jdbc.queryForObject("SELECT now()", java.sql.Timestamp.class).toInstant();
        // far ahead of every other test's partitions: day D at 22:30, a node with hourly partitions
        Instant day = now.plus(Duration.ofDays(300)).truncatedTo(java.time.temporal.ChronoUnit.DAYS);
        Instant at = day.plus(Duration.ofHours(22)).plus(Duration.ofMinutes(30));
        StreamProperties p = properties;
        StreamProperties hourly = new StreamProperties(p.maxChunkChars(), p.maxBlobBytes(), p.maxChunksPerRequest(), p.idleTimeout(),
                p.idleCheckInterval(), p.queueSize(), p.batchSize(), p.linger(), p.writers(), p.commitTimeout(), p.pageSize(),
                p.tailPollInterval(), p.maxSubscriptionsPerConnection(), p.subscriberBufferChars(), Duration.ofHours(1), 3,
                p.maintenanceInterval(), p.devBots());
        ChunkPartitions byTheHour = new ChunkPartitions(hourly, context.getBean(dev.waterline.history.RetentionProperties.class),
                context.getBean(ChunkPartitionRepository.class), context.getBean(dev.waterline.lifecycle.Loops.class),
                context.getBean(dev.waterline.metrics.WaterlineMetrics.class));
        Duration keepAll = Duration.ofDays(1000);
        assertThat(byTheHour.maintain(at, keepAll).created()).contains(ChunkPartitions.name(day.plus(Duration.ofHours(22)),
                Duration.ofHours(1)), ChunkPartitions.name(day.plus(Duration.ofHours(25)), Duration.ofHours(1)));

        // then the width is a day again: days D and D + 1 are filled hour by hour around the hourly ones, D + 2 and D + 3 whole
        ChunkPartitions.Pass daily = partitions.maintain(at, keepAll);
        assertThat(daily.created()).contains(ChunkPartitions.name(day.plus(Duration.ofDays(2)), Duration.ofDays(1)),
                ChunkPartitions.name(day, Duration.ofHours(1)), ChunkPartitions.name(day.plus(Duration.ofHours(47)), Duration.ofHours(1)));
        List<String> all = partitionNames();
        for (Instant h = day; h.isBefore(day.plus(Duration.ofDays(4))); h = h.plus(Duration.ofHours(1))) {
            Instant hour = h;
            assertThat(all.stream().filter(n -> ChunkPartitions.start(n) != null && !ChunkPartitions.start(n).isAfter(hour)
                    && ChunkPartitions.end(n).isAfter(hour)).count()).as("partitions holding " + hour).isEqualTo(1);
        }
    }
}
