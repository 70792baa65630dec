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
    static final Duration BOUND = Duration.ofSeconds(2);

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
            List<String> late = new ArrayList<>();
            long slowest = 0;
            for (var e : sentAt.entrySet()) {
                long took = fast.requestsFor(e.getKey()).getFirst().arrivedNanos() - e.getValue();
                slowest = Math.max(slowest, took);
                if (took > BOUND.toNanos()) {
                    late.add(e.getKey() + " after " + TimeUnit.NANOSECONDS.toMillis(took) + " ms");
                }
            }
            log.info("the fast hook's slowest delivery: " + TimeUnit.NANOSECONDS.toMillis(slowest) + " ms after its send; the slow target had "
                    + slow.requests().size() + " calls, at most " + slow.mostAtOnce() + " at once");
            assertThat(late).as("fast deliveries later than " + BOUND + " of their send, of " + sentAt.size()).isEmpty();
            // the slow hooks were served meanwhile, all of them together held to the slow share
            assertThat(slow.requests().size()).isGreaterThanOrEqualTo(slowHooks.size());
            assertThat(slow.mostAtOnce()).isLessThanOrEqualTo((int) (properties.maxInFlight() * properties.slowShare()));
            for (String h : slowHooks) {
                assertThat(api.delete("/api/hooks/" + h, mallory).status()).isEqualTo(204);
            }
        }
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
