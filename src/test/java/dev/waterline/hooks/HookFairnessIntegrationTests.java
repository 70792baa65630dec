package dev.waterline.hooks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.waterline.support.Api;
import dev.waterline.support.HookReceiver;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Fair shares between hooks (docs/ARCHITECTURE.md, "Hooks", H6), with the production limits
 * ({@code max-in-flight} 256, {@code per-hook-concurrency} 8): one user's 32 hooks to a target
 * that answers 200 after 5 s, fed steadily (32 × 8 = 256, the security probe's shape), must not
 * delay another user's hook to a fast target. A context of its own: the calls must be allowed
 * to take 5 s ({@code call-timeout} 8 s), which the shared hooks context does not allow.
 */
@WaterlineIntegrationTest
@TestPropertySource(properties = {
        "waterline.embedded.database=hooks_fair",
        "spring.data.redis.database=37",
        "waterline.hooks.poll-interval=100ms",
        "waterline.hooks.call-timeout=8s",
        "waterline.hooks.claim-timeout=20s",
        "waterline.hooks.maintenance-interval=1s"})
class HookFairnessIntegrationTests {

    private static final Log log = LogFactory.getLog(HookFairnessIntegrationTests.class);
    static final long SLOW_MILLIS = 5_000;
    /** Alice's messages: one every half second, so about 12 s of the slow hooks' load. */
    static final int FAST_MESSAGES = 24;
    /** Far below the slow target's 5 s: what a fast hook's delivery may take while the slow ones are busy. */
    static final Duration BOUND = Duration.ofSeconds(3);

    @LocalServerPort
    int port;

    @Autowired
    HookProperties properties;

    @Test
    void anotherUsersThirtyTwoSlowHooksDoNotDelayAFastHooksDeliveries() throws Exception {
        assertThat(32 * properties.perHookConcurrency()).as("the probe's shape: the slow hooks could take every claim")
                .isGreaterThanOrEqualTo(properties.maxInFlight());
        Api api = new Api(port);
        String mallory = api.token("fair-mallory");
        api.token("fair-mallory-friend");
        Api.Pair alice = api.pair("fair-alice");
        try (HookReceiver slow = new HookReceiver().respond((r, before) -> new HookReceiver.Answer(200, Map.of(), SLOW_MILLIS));
             HookReceiver fast = new HookReceiver()) {
            List<String> slowChats = new ArrayList<>();
            List<String> slowHooks = new ArrayList<>();
            for (int c = 0; c < 4; c++) {
                String chat = api.createChat(mallory, "fair-mallory-friend");
                slowChats.add(chat);
                for (int h = 0; h < 8; h++) {
                    slowHooks.add(hook(api, mallory, chat, slow.url("/slow/" + c + "/" + h)));
                }
            }
            String fastHook = hook(api, alice.alice(), alice.chat(), fast.url("/fast"));

            Map<String, Long> sentAt = new ConcurrentHashMap<>();
            List<Throwable> feederFailures = new CopyOnWriteArrayList<>();
            AtomicInteger slowSent = new AtomicInteger();
            ScheduledExecutorService feeder = Executors.newScheduledThreadPool(2);
            try (WsClient m = WsClient.connectWelcomed(port, mallory); WsClient a = WsClient.connectWelcomed(port, alice.alice())) {
                // mallory: a message a second in each of her four chats (32 deliveries a second, each 5 s long)
                feeder.scheduleAtFixedRate(() -> feed(feederFailures, () -> {
                    int n = slowSent.getAndIncrement();
                    for (String chat : slowChats) {
                        m.sendMessage("s" + n + chat, chat, "slow " + n);
                    }
                    for (String chat : slowChats) {
                        m.answer("s" + n + chat);
                    }
                }), 0, 1, TimeUnit.SECONDS);
                // alice: two messages a second, each timed from its send
                AtomicInteger fastSent = new AtomicInteger();
                feeder.scheduleAtFixedRate(() -> feed(feederFailures, () -> {
                    if (fastSent.get() >= FAST_MESSAGES) {
                        return;
                    }
                    String id = "f" + fastSent.getAndIncrement();
                    long t = System.nanoTime();
                    a.sendMessage(id, alice.chat(), "fast " + id);
                    sentAt.put(fastHook + ":" + a.answer(id).get("messageId").asString(), t);
                }), 500, 500, TimeUnit.MILLISECONDS);

                await().atMost(Duration.ofSeconds(30)).until(() -> sentAt.size() >= FAST_MESSAGES || !feederFailures.isEmpty());
                feeder.shutdown();
                assertThat(feeder.awaitTermination(15, TimeUnit.SECONDS)).isTrue();
            }
            finally {
                feeder.shutdownNow();
            }

            assertThat(feederFailures).isEmpty();
            assertThat(sentAt).hasSize(FAST_MESSAGES);
            await().atMost(Duration.ofSeconds(30)).until(() -> sentAt.keySet().stream().allMatch(k -> !fast.requestsFor(k).isEmpty()));
            List<String> late = late(sentAt, fast);
            log.info("the fast hook's deliveries later than " + BOUND + ": " + late + "; the slow target had " + slow.requests().size()
                    + " calls, at most " + slow.mostAtOnce() + " at once");
            assertThat(late).as("fast deliveries later than " + BOUND + " of their send, of " + sentAt.size()).isEmpty();
            // the slow hooks were served meanwhile, each held to its equal part of the slow share,
            // counting one hook more: 128 / 33 = 3 calls, 96 in all (before shares: 128, the per-kind permits)
            int slowShare = (int) (properties.maxInFlight() * properties.slowShare());
            assertThat(slow.requests().size()).isGreaterThanOrEqualTo(slowHooks.size());
            assertThat(slow.mostAtOnce()).isLessThanOrEqualTo(slowHooks.size() * (slowShare / (slowHooks.size() + 1)));
            for (String h : slowHooks) {
                assertThat(api.delete("/api/hooks/" + h, mallory).status()).isEqualTo(204);
            }
        }
    }

    /** What each of the turning target's paths answers at once before it turns: enough for a limit of 8 (1 + 2 + 4 calls). */
    static final int FAST_ANSWERS = 7;
    /** How long the turning target then takes to answer, below {@code call-timeout}: a slow success opens no breaker. */
    static final long TURNED_MILLIS = 6_000;

    @Test
    void anotherUsersHooksThatAnswerFastThenSlowlyCannotTakeTheNodeFromAFastHook() throws Exception {
        Api api = new Api(port);
        String mallory = api.token("turn-mallory");
        api.token("turn-mallory-friend");
        Api.Pair alice = api.pair("turn-alice");
        try (HookReceiver turning = new HookReceiver().respond(HookReceiver.fastThenSlow(FAST_ANSWERS, TURNED_MILLIS));
             HookReceiver fast = new HookReceiver()) {
            List<String> turningChats = new ArrayList<>();
            List<String> turningHooks = new ArrayList<>();
            for (int c = 0; c < 4; c++) {
                String chat = api.createChat(mallory, "turn-mallory-friend");
                turningChats.add(chat);
                for (int h = 0; h < 8; h++) {
                    turningHooks.add(hook(api, mallory, chat, turning.url("/turn/" + c + "/" + h)));
                }
            }
            String fastHook = hook(api, alice.alice(), alice.chat(), fast.url("/fast"));
            Map<String, Long> sentAt = new ConcurrentHashMap<>();
            List<Throwable> feederFailures = new CopyOnWriteArrayList<>();
            ScheduledExecutorService feeder = Executors.newSingleThreadScheduledExecutor();
            try (WsClient m = WsClient.connectWelcomed(port, mallory); WsClient a = WsClient.connectWelcomed(port, alice.alice())) {
                // alice's hook is judged fast before anything else happens
                for (int i = 0; i < 3; i++) {
                    a.sendMessage("warm" + i, alice.chat(), "warm " + i);
                    String key = fastHook + ":" + a.answer("warm" + i).get("messageId").asString();
                    await().atMost(Duration.ofSeconds(10)).until(() -> !fast.requestsFor(key).isEmpty());
                }
                // mallory: a backlog of 15 deliveries for each of her 32 hooks, sent at once
                for (int n = 0; n < 15; n++) {
                    for (String chat : turningChats) {
                        m.sendMessage("t" + n + chat, chat, "turn " + n);
                    }
                }
                for (int n = 0; n < 15; n++) {
                    for (String chat : turningChats) {
                        assertThat(m.answer("t" + n + chat).get("type").asString()).isEqualTo("accepted");
                    }
                }
                // every path has had its fast answers: from here on each of mallory's calls takes 6 s
                await().atMost(Duration.ofSeconds(20)).until(() -> turning.requests().size() >= turningHooks.size() * FAST_ANSWERS);
                // alice: a message every 500 ms while they are out
                AtomicInteger fastSent = new AtomicInteger();
                feeder.scheduleAtFixedRate(() -> feed(feederFailures, () -> {
                    if (fastSent.get() >= 12) {
                        return;
                    }
                    String id = "f" + fastSent.getAndIncrement();
                    long t = System.nanoTime();
                    a.sendMessage(id, alice.chat(), "fast " + id);
                    sentAt.put(fastHook + ":" + a.answer(id).get("messageId").asString(), t);
                }), 0, 500, TimeUnit.MILLISECONDS);
                await().atMost(Duration.ofSeconds(30)).until(() -> sentAt.size() >= 12 || !feederFailures.isEmpty());
            }
            finally {
                feeder.shutdownNow();
            }
            assertThat(feederFailures).isEmpty();
            await().atMost(Duration.ofSeconds(30)).until(() -> sentAt.keySet().stream().allMatch(k -> !fast.requestsFor(k).isEmpty()));
            List<String> late = late(sentAt, fast);
            log.info("turning target: at most " + turning.mostAtOnce() + " calls at once; the fast hook's deliveries later than "
                    + BOUND + ": " + late);
            assertThat(late).as("fast deliveries later than " + BOUND + " of their send, of " + sentAt.size()).isEmpty();
            assertThat(turning.mostAtOnce()).as("one user's hooks hold at most waterline.hooks.user-share of max-in-flight")
                    .isLessThanOrEqualTo((int) (properties.maxInFlight() * 0.5));
            for (String h : turningHooks) {
                assertThat(api.delete("/api/hooks/" + h, mallory).status()).isEqualTo(204);
            }
        }
    }

    /** Deliveries of {@code sentAt}'s keys that reached {@code receiver} later than {@link #BOUND} after their send. */
    static List<String> late(Map<String, Long> sentAt, HookReceiver receiver) {
        List<String> late = new ArrayList<>();
        for (var e : sentAt.entrySet()) {
            long took = receiver.requestsFor(e.getKey()).getFirst().arrivedNanos() - e.getValue();
            if (took > BOUND.toNanos()) {
                late.add(e.getKey() + " after " + TimeUnit.NANOSECONDS.toMillis(took) + " ms");
            }
        }
        return late;
    }

    /** A feeder's tick: what it throws is kept for the test to report (a scheduled task's failure would only end it). */
    static void feed(List<Throwable> failures, Runnable tick) {
        try {
            tick.run();
        }
        catch (Throwable t) {
            failures.add(t);
        }
    }

    static String hook(Api api, String token, String chat, String url) {
        Api.Response r = api.post("/api/chats/" + chat + "/hooks", token, Map.of("kind", "http", "url", url));
        assertThat(r.status()).as(r.text()).isEqualTo(201);
        return r.body().get("hookId").asString();
    }
}
