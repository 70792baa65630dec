package dev.waterline.reclaim;

import java.time.Clock;
import java.time.Duration;
import java.util.List;

import dev.waterline.lifecycle.Loops;
import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.outbox.OutboxStore;
import dev.waterline.session.SessionRegistry;
import dev.waterline.history.RetentionProperties;
import dev.waterline.presence.ClusterProperties;
import dev.waterline.presence.Presence;
import dev.waterline.watermark.IndexHealth;
import dev.waterline.watermark.MarkerStore;
import dev.waterline.watermark.WatermarkIndex;
import dev.waterline.watermark.WatermarkKeys;
import dev.waterline.watermark.redis.RedisWatermarkIndexes;
import dev.waterline.support.Api;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.TestPropertySource;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The GC against real PostgreSQL and Redis. The loop is off here: each test drives
 * {@link Reclaim#pass()} itself, and ages rows by moving their {@code created_at} back instead of
 * waiting out the grace.
 */
@WaterlineIntegrationTest
@TestPropertySource(properties = {
        "waterline.reclaim.enabled=false",
        "waterline.reclaim.grace=5s",
        "waterline.embedded.database=reclaim",
        "spring.data.redis.database=7"})
class ReclaimIntegrationTests {

    @LocalServerPort
    int port;

    @Autowired
    Reclaim reclaim;

    @Autowired
    JdbcTemplate jdbc;

    @Autowired
    StringRedisTemplate redis;

    @Autowired
    WatermarkIndex index;

    @Autowired
    MarkerStore markers;

    @Autowired
    Presence presence;

    @Autowired
    ClusterProperties cluster;

    @Autowired
    Leadership leadership;

    @Autowired
    OutboxStore outbox;

    @Autowired
    SessionRegistry sessions;

    @Autowired
    WaterlineMetrics metrics;

    @Autowired
    Loops loops;

    Api api;

    @BeforeEach
    void primed() {
        api = new Api(port);
        reclaim.pass();
        reclaim.pass();
    }

    @Test
    void rowsEveryoneAckedGoButNotRowsYoungerThanTheGrace() {
        String alice = api.token("gc-ack-alice");
        String chat = api.createChat(alice, "gc-ack-bob");
        try (WsClient a = WsClient.connect(port, alice); WsClient b = WsClient.connect(port, api.token("gc-ack-bob"))) {
            a.next("welcome");
            b.next("welcome");
            long first = sendAndAck(a, b, chat, "gc-ack-1");
            long second = sendAndAck(a, b, chat, "gc-ack-2");
            age(first);

            reclaim.pass();

            assertThat(exists(first)).as("acked and older than the grace").isFalse();
            assertThat(exists(second)).as("acked but younger than the grace").isTrue();
            assertThat(api.history(alice, chat, null, 100)).hasSize(2);
        }
    }

    @Test
    void anOutOfOrderAckLeavesThePinOnTheGapAndTheRowAtTheGapSurvives() {
        String alice = api.token("gc-gap-alice");
        String chat = api.createChat(alice, "gc-gap-bob");
        try (WsClient a = WsClient.connect(port, alice); WsClient b = WsClient.connect(port, api.token("gc-gap-bob"))) {
            a.next("welcome");
            b.next("welcome");
            long unacked = deliveryOf(a, b, chat, "gc-gap-1");
            long acked = sendAndAck(a, b, chat, "gc-gap-2");
            age(unacked);
            age(acked);

            reclaim.pass();

            assertThat(exists(unacked)).as("pending: holds the line").isTrue();
            assertThat(exists(acked)).as("at or above the line").isTrue();
            assertThat(index.lowestPin()).hasValue(unacked);
            b.ack(unacked);
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> {
                reclaim.pass();
                return !exists(unacked) && !exists(acked);
            });
        }
    }

    @Test
    void anOfflineRecipientHoldsNothingDownAndKeepsTheMessageInHistory() {
        String alice = api.token("gc-off-alice");
        String chat = api.createChat(alice, "gc-off-carol");
        try (WsClient a = WsClient.connect(port, alice)) {
            a.next("welcome");
            a.sendMessage("gc-off-1", chat, "for later");
            String messageId = a.answer("gc-off-1").get("messageId").asString();
            long row = jdbc.queryForObject("SELECT id FROM outbox WHERE message_id = ?", Long.class, messageId);
            age(row);

            reclaim.pass();

            assertThat(exists(row)).isFalse();
            assertThat(api.history(api.token("gc-off-carol"), chat, null, 100))
                    .extracting(m -> m.get("messageId").asString()).containsExactly(messageId);
        }
    }

    @Test
    void afterARedisFlushThePassRebuildsTheIndexFromTheOutboxBeforeDeletingAnything() {
        String alice = api.token("gc-flush-alice");
        String chat = api.createChat(alice, "gc-flush-bob");
        try (WsClient a = WsClient.connect(port, alice); WsClient b = WsClient.connect(port, api.token("gc-flush-bob"))) {
            a.next("welcome");
            b.next("welcome");
            long unacked = deliveryOf(a, b, chat, "gc-flush-1");
            age(unacked);
            redis.getRequiredConnectionFactory().getConnection().serverCommands().flushDb();

            assertThat(reclaim.pass()).as("a pass that finds no marker deletes nothing").isZero();
            assertThat(exists(unacked)).isTrue();
            assertThat(statusOf("gc-flush-bob", unacked)).containsExactly(WatermarkIndex.RowStatus.OWED);

            reclaim.pass();
            assertThat(exists(unacked)).as("the rebuilt pin holds the line").isTrue();
        }
    }

    @Test
    void aRebuildAfterAcksDoesNotOweTheAckedRowsAgain() {
        String alice = api.token("gc-rbacked-alice");
        String chat = api.createChat(alice, "gc-rbacked-bob");
        try (WsClient a = WsClient.connect(port, alice); WsClient b = WsClient.connect(port, api.token("gc-rbacked-bob"))) {
            a.next("welcome");
            b.next("welcome");
            long acked = sendAndAck(a, b, chat, "gc-rbacked-1");
            long unacked = deliveryOf(a, b, chat, "gc-rbacked-2");
            // the poller's next claim of these rows is an hour away: the rebuild's scan finds both in delivery
            jdbc.update("UPDATE outbox SET due_at = now() + interval '1 hour' WHERE id IN (?, ?)", acked, unacked);
            assertThat(inDelivery(acked)).isTrue();
            assertThat(redis.opsForZSet().score(WatermarkKeys.ackedKey("gc-rbacked-bob"), Long.toString(acked))).isNotNull();

            reclaim.rebuild(markers.read().generation());

            assertThat(redis.opsForZSet().score(WatermarkKeys.owedKey("gc-rbacked-bob"), Long.toString(acked)))
                    .as("the acked row is not owed again").isNull();
            assertThat(statusOf("gc-rbacked-bob", acked, unacked)).as("acked: for the poller to retire; unacked: still pending")
                    .containsExactly(WatermarkIndex.RowStatus.NEITHER, WatermarkIndex.RowStatus.PENDING);
        }
    }

    @Test
    void aRedisAheadOfARestoredDatabaseLosesItsAckedSetsBeforeAnyRebuild() {
        String key = WatermarkKeys.ackedKey("gc-restored-bob");
        redis.opsForZSet().add(key, "12345", 12345);
        MarkerStore.Marker m = markers.read();
        // PostgreSQL restored to an earlier point, Redis not flushed: Redis holds a later marker
        redis.opsForValue().set(WatermarkKeys.MARKER, Long.toString(m.token() + 100));

        assertThat(reclaim.pass()).isZero();

        assertThat(redis.hasKey(key)).as("ids the restored outbox hands out again must not be skipped").isFalse();
        assertThat(markers.read().generation()).isEqualTo(m.generation() + 1);
    }

    @Test
    void aRedisThatFallsBackToAnOlderStateIsCaughtByItsMarkerAndRebuilt() {
        String alice = api.token("gc-stale-alice");
        String chat = api.createChat(alice, "gc-stale-bob");
        try (WsClient a = WsClient.connect(port, alice); WsClient b = WsClient.connect(port, api.token("gc-stale-bob"))) {
            a.next("welcome");
            b.next("welcome");
            long before = index.marker().orElseThrow();
            reclaim.pass();
            long unacked = deliveryOf(a, b, chat, "gc-stale-1");
            age(unacked);
            // A stale replica takes over: it has the older marker and not the newer pin.
            redis.opsForValue().set(WatermarkKeys.MARKER, Long.toString(before));
            redis.delete(WatermarkKeys.pendingKey("gc-stale-bob"));
            redis.opsForZSet().remove(WatermarkKeys.PINS, "gc-stale-bob");

            assertThat(reclaim.pass()).isZero();
            assertThat(exists(unacked)).isTrue();
            assertThat(index.lowestPin().getAsLong()).isLessThanOrEqualTo(unacked);
            assertThat(index.marker()).hasValue(markers.read().token());
        }
    }

    @Test
    void aFreshlyStartedProcessRebuildsBeforeItsFirstDelete() {
        String alice = api.token("gc-start-alice");
        String chat = api.createChat(alice, "gc-start-bob");
        try (WsClient a = WsClient.connect(port, alice); WsClient b = WsClient.connect(port, api.token("gc-start-bob"))) {
            a.next("welcome");
            b.next("welcome");
            long unacked = deliveryOf(a, b, chat, "gc-start-1");
            redis.delete(WatermarkKeys.pendingKey("gc-start-bob"));
            redis.opsForZSet().remove(WatermarkKeys.PINS, "gc-start-bob");
            age(unacked);
            Reclaim restarted = reclaimOver(index, new IndexHealth());

            assertThat(restarted.pass()).isZero();
            assertThat(exists(unacked)).isTrue();
            assertThat(statusOf("gc-start-bob", unacked)).containsExactly(WatermarkIndex.RowStatus.OWED);
        }
    }

    @Test
    void aPassThatCannotReachRedisDeletesNothing() {
        String alice = api.token("gc-down-alice");
        String chat = api.createChat(alice, "gc-down-carol");
        try (WsClient a = WsClient.connect(port, alice)) {
            a.next("welcome");
            a.sendMessage("gc-down-1", chat, "kept");
            String messageId = a.answer("gc-down-1").get("messageId").asString();
            long row = jdbc.queryForObject("SELECT id FROM outbox WHERE message_id = ?", Long.class, messageId);
            age(row);
            LettuceConnectionFactory nowhere = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", 1));
            nowhere.afterPropertiesSet();
            nowhere.start();
            try {
                StringRedisTemplate down = new StringRedisTemplate(nowhere);
                Reclaim cut = reclaimOver(RedisWatermarkIndexes.on(down), new IndexHealth());
                assertThatThrownBy(cut::pass).isInstanceOf(RuntimeException.class);
                assertThat(exists(row)).isTrue();
            }
            finally {
                nowhere.destroy();
            }
        }
    }

    @Test
    void theBackstopDeletesRowsPastTheOutboxRetentionWhateverTheLine() {
        String alice = api.token("gc-old-alice");
        String chat = api.createChat(alice, "gc-old-bob");
        try (WsClient a = WsClient.connect(port, alice); WsClient b = WsClient.connect(port, api.token("gc-old-bob"))) {
            a.next("welcome");
            b.next("welcome");
            long unacked = deliveryOf(a, b, chat, "gc-old-1");
            jdbc.update("UPDATE outbox SET created_at = now() - interval '27 hours' WHERE id = ?", unacked);

            reclaim.pass();

            assertThat(exists(unacked)).isFalse();
            assertThat(api.history(alice, chat, null, 100)).hasSize(1);
        }
    }

    @Test
    void anAckFrameWithMoreIdsThanOneScriptCallTakesIsRecordedAllTheSame() {
        Api.Pair pair = api.pair("rc-bigack");
        String alice = pair.alice(), bob = pair.bob(), chat = pair.chat();
        try (WsClient a = WsClient.connectWelcomed(port, alice); WsClient b = WsClient.connectWelcomed(port, bob)) {
            long first = deliveryOf(a, b, chat, "rc-bigack-1");
            long second = deliveryOf(a, b, chat, "rc-bigack-2");
            long[] ids = new long[5000];   // above the 4096 ids of one batched call: recorded by the gateway's thread
            for (int i = 0; i < ids.length; i++) {
                ids[i] = second + 1_000_000 + i;
            }
            ids[0] = first;
            ids[ids.length - 1] = second;
            b.ack(ids);
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5))
                    .until(() -> redis.opsForZSet().size(WatermarkKeys.pendingKey(userOf(b))) == 0);
        }
    }

    /** A reclaim of its own (as a freshly started process has), over {@code redis} and with a fresh {@code health}. */
    private Reclaim reclaimOver(WatermarkIndex redis, IndexHealth health) {
        ReclaimProperties properties = new ReclaimProperties(false, Duration.ofSeconds(1), Duration.ofSeconds(5), 10_000, 20);
        IndexStores stores = new IndexStores(redis, markers, health);
        return new Reclaim(properties, new Generations(properties, stores, presence, cluster, leadership, metrics),
                new OutboxGc(properties, new RetentionProperties(Duration.ofDays(90), Duration.ofHours(26), Duration.ofMinutes(1)), stores, outbox, leadership, metrics, Clock.systemUTC()),
                new IndexRebuild(stores, outbox, sessions, presence, cluster, metrics), leadership, loops);
    }

    private long deliveryOf(WsClient a, WsClient b, String chat, String corr) {
        a.sendMessage(corr, chat, corr);
        String messageId = a.answer(corr).get("messageId").asString();
        JsonNode m = b.next(f -> messageId.equals(f.path("messageId").asString()), Duration.ofSeconds(10));
        return m.get("deliveryId").asLong();
    }

    private long sendAndAck(WsClient a, WsClient b, String chat, String corr) {
        long id = deliveryOf(a, b, chat, corr);
        b.ack(id);
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5))
                .until(() -> redis.opsForZSet().score(WatermarkKeys.pendingKey(userOf(b)), Long.toString(id)) == null);
        return id;
    }

    private String userOf(WsClient c) {
        return c.received().getFirst().get("userId").asString();
    }

    private void age(long id) {
        jdbc.update("UPDATE outbox SET created_at = now() - interval '10 seconds' WHERE id = ?", id);
    }

    private boolean inDelivery(long id) {
        return Boolean.TRUE.equals(jdbc.queryForObject("SELECT due_at <> 'infinity' FROM outbox WHERE id = ?", Boolean.class, id));
    }

    private boolean exists(long id) {
        return !jdbc.queryForList("SELECT id FROM outbox WHERE id = ?", Long.class, id).isEmpty();
    }

    /** Where these rows stand for the user's connection, judged under PostgreSQL's marker. */
    List<WatermarkIndex.RowStatus> statusOf(String user, long... ids) {
        MarkerStore.Marker m = markers.read();
        return ((WatermarkIndex.Statuses.Known) index.status(user, sessions.get(user).sessionId(), m.token(), m.generation(), false, ids)).each();
    }
}
