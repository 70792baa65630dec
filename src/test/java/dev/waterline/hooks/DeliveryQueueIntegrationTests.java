package dev.waterline.hooks;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import dev.waterline.support.Api;
import dev.waterline.support.HookReceiver;
import dev.waterline.support.WsClient;
import org.junit.jupiter.api.Test;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The claim and record statements' own guarantees, driven directly against the real table. */
@HooksTestContext
class DeliveryQueueIntegrationTests {

    @LocalServerPort
    int port;

    @Autowired
    DeliveryQueueRepository queue;

    @Autowired
    JdbcTemplate jdbc;

    @Autowired
    MeterRegistry registry;

    /** A hook whose breaker is held open for an hour (so the workers leave its rows alone), and one delivery of it. */
    long heldDelivery(String prefix) {
        Api api = new Api(port);
        Api.Pair p = api.pair(prefix);
        String hookId = api.post("/api/chats/" + p.chat() + "/hooks", p.alice(), Map.of("kind", "http", "url", "http://localhost:9/x"))
                .body().get("hookId").asString();
        jdbc.update("UPDATE hooks SET breaker = 'open', reopen_at = now() + interval '1 hour' WHERE hook_id = ?", hookId);
        try (WsClient alice = WsClient.connectWelcomed(port, p.alice())) {
            alice.sendMessage("m", p.chat(), "x");
            assertThat(alice.answer("m").get("type").asString()).isEqualTo("accepted");
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> jdbc.queryForObject(
                "SELECT count(*) FROM hook_deliveries WHERE hook_id = ? AND status = 'held'", Long.class, hookId) == 1);
        return jdbc.queryForObject("SELECT id FROM hook_deliveries WHERE hook_id = ?", Long.class, hookId);
    }

    DeliveryQueueRepository.Claimed claimAs(long id, int attempt) {
        jdbc.update("UPDATE hook_deliveries SET status = 'claimed', claimed_by = 'me', attempts = ?, claim_deadline = now() + interval '1 minute'"
                + " WHERE id = ?", attempt, id);
        String hook = jdbc.queryForObject("SELECT hook_id FROM hook_deliveries WHERE id = ?", String.class, id);
        return new DeliveryQueueRepository.Claimed(id, new DeliveryQueueRepository.Hook(hook, "c", "http", Map.of(), null, "u"),
                "k", "{}", attempt, 0, false);
    }

    @Test
    void anOutcomeOfAnExpiredClaimIsNotAppliedToTheClaimThatFollowedIt() {
        long id = heldDelivery("dq-late");
        DeliveryQueueRepository.Claimed first = claimAs(id, 1);
        // the first claim expired and the row was claimed again (attempt 2) before the first's outcome came
        DeliveryQueueRepository.Claimed second = claimAs(id, 2);

        queue.record("me", List.of(new DeliveryQueueRepository.Recorded(first, Verdict.DEAD, null, "late", false)), 5,
                Duration.ofSeconds(1));
        assertThat(jdbc.queryForObject("SELECT status FROM hook_deliveries WHERE id = ?", String.class, id)).isEqualTo("claimed");

        queue.record("me", List.of(new DeliveryQueueRepository.Recorded(first, Verdict.DONE, null, null, true)), 5, Duration.ofSeconds(1));
        assertThat(jdbc.queryForObject("SELECT count(*) FROM hook_deliveries WHERE id = ?", Long.class, id)).isEqualTo(1);

        queue.record("someone-else", List.of(new DeliveryQueueRepository.Recorded(second, Verdict.DONE, null, null, true)), 5,
                Duration.ofSeconds(1));
        assertThat(jdbc.queryForObject("SELECT count(*) FROM hook_deliveries WHERE id = ?", Long.class, id)).isEqualTo(1);

        queue.record("me", List.of(new DeliveryQueueRepository.Recorded(second, Verdict.DONE, null, null, true)), 5, Duration.ofSeconds(1));
        assertThat(jdbc.queryForObject("SELECT count(*) FROM hook_deliveries WHERE id = ?", Long.class, id)).isZero();
    }

    @Test
    void aCallNotMadeGivesItsAttemptBack() {
        long id = heldDelivery("dq-release");
        DeliveryQueueRepository.Claimed c = claimAs(id, 3);
        queue.record("me", List.of(new DeliveryQueueRepository.Recorded(c, Verdict.RELEASE, Instant.now(), null, null)), 5,
                Duration.ofSeconds(1));
        assertThat(jdbc.queryForObject("SELECT attempts FROM hook_deliveries WHERE id = ?", Integer.class, id)).isEqualTo(2);
        assertThat(jdbc.queryForObject("SELECT status FROM hook_deliveries WHERE id = ?", String.class, id)).isEqualTo("held");
    }

    @Test
    void openBreakersWithNothingToProbeDoNotKeepAnotherFromItsProbe() {
        Api api = new Api(port);
        Api.Pair p = api.pair("dq-starve");
        List<String> idle = new java.util.ArrayList<>();
        for (int i = 0; i < 9; i++) {
            String h = api.post("/api/chats/" + p.chat() + "/hooks", p.alice(), Map.of("kind", "http", "url", "http://localhost:9/idle" + i))
                    .body().get("hookId").asString();
            // cooled long ago, nothing held: first in line, with nothing to probe
            jdbc.update("UPDATE hooks SET breaker = 'open', reopen_at = now() - interval '1 day' WHERE hook_id = ?", h);
            idle.add(h);
        }
        long id = heldDelivery("dq-starve-target");
        String hook = jdbc.queryForObject("SELECT hook_id FROM hook_deliveries WHERE id = ?", String.class, id);
        jdbc.update("UPDATE hooks SET reopen_at = now() - interval '1 minute' WHERE hook_id = ?", hook);

        // whoever probes (this test or the context's own probe pass), nine cooled breakers with
        // nothing to probe ahead of it in line must not keep it from its probe
        queue.claimProbes("dq-test", Duration.ofSeconds(30), 8);
        await().atMost(Duration.ofSeconds(10)).until(() -> "half_open".equals(
                jdbc.queryForObject("SELECT breaker FROM hooks WHERE hook_id = ?", String.class, hook)));
        assertThat(jdbc.queryForObject("SELECT probe_id FROM hooks WHERE hook_id = ?", Long.class, hook)).isEqualTo(id);
        // the others, and this probe's hook, leave the shared context as other tests expect it
        jdbc.update("DELETE FROM hooks WHERE hook_id = ANY (?::text[])", (Object) idle.toArray(String[]::new));
        jdbc.update("DELETE FROM hook_deliveries WHERE hook_id = ?", hook);
        jdbc.update("DELETE FROM hooks WHERE hook_id = ?", hook);
    }

    @Test
    void aLateOutcomeOfAnEarlierProbeOfTheSameDeliveryDoesNotDecideTheBreaker() {
        long id = heldDelivery("dq-probe");
        String hook = jdbc.queryForObject("SELECT hook_id FROM hook_deliveries WHERE id = ?", String.class, id);
        // the row's second probe is out (attempt 2); the first probe's failure comes late
        jdbc.update("UPDATE hooks SET breaker = 'half_open', probe_id = ?, probe_attempt = 2, probe_deadline = now() + interval '1 hour'"
                + " WHERE hook_id = ?", id, hook);
        DeliveryQueueRepository.Claimed second = claimAs(id, 2);
        DeliveryQueueRepository.Claimed first = new DeliveryQueueRepository.Claimed(id, new DeliveryQueueRepository.Hook(hook, "c", "http", Map.of(), null, "u"),
                "k", "{}", 1, 0, true);
        queue.record("me", List.of(new DeliveryQueueRepository.Recorded(first, Verdict.RETRY, Instant.now(), "late", false)), 5,
                Duration.ofSeconds(1));
        assertThat(jdbc.queryForObject("SELECT breaker FROM hooks WHERE hook_id = ?", String.class, hook)).isEqualTo("half_open");

        DeliveryQueueRepository.Claimed probe = new DeliveryQueueRepository.Claimed(id, new DeliveryQueueRepository.Hook(hook, "c", "http", Map.of(), null, "u"),
                "k", "{}", second.attempt(), 0, true);
        queue.record("me", List.of(new DeliveryQueueRepository.Recorded(probe, Verdict.DONE, null, null, true)), 5, Duration.ofSeconds(1));
        assertThat(jdbc.queryForObject("SELECT breaker FROM hooks WHERE hook_id = ?", String.class, hook)).isEqualTo("closed");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM hooks WHERE hook_id = ? AND probe_id IS NULL AND probe_attempt IS NULL",
                Long.class, hook)).isEqualTo(1);
    }

    @Test
    void aProbeNotMadeOpensItsBreakerAgainWithTheNextProbeDueAtOnce() {
        long id = heldDelivery("dq-probe-not-made");
        String hook = jdbc.queryForObject("SELECT hook_id FROM hook_deliveries WHERE id = ?", String.class, id);
        jdbc.update("UPDATE hooks SET breaker = 'half_open', failures = 5, probe_id = ?, probe_attempt = 2,"
                + " probe_deadline = now() + interval '1 hour' WHERE hook_id = ?", id, hook);
        claimAs(id, 2);
        // due again in an hour: no probe pass of the shared context takes the row meanwhile
        Instant later = Instant.now().plus(Duration.ofHours(1));
        DeliveryQueueRepository.Claimed earlier = new DeliveryQueueRepository.Claimed(id, new DeliveryQueueRepository.Hook(hook, "c", "http", Map.of(), null, "u"),
                "k", "{}", 1, 0, true);
        queue.record("me", List.of(new DeliveryQueueRepository.Recorded(earlier, Verdict.RELEASE, later, null, null)), 5,
                Duration.ofSeconds(1));
        assertThat(jdbc.queryForObject("SELECT breaker FROM hooks WHERE hook_id = ?", String.class, hook))
                .as("an earlier probe of the row decides nothing").isEqualTo("half_open");

        DeliveryQueueRepository.Claimed probe = new DeliveryQueueRepository.Claimed(id, new DeliveryQueueRepository.Hook(hook, "c", "http", Map.of(), null, "u"),
                "k", "{}", 2, 0, true);
        queue.record("me", List.of(new DeliveryQueueRepository.Recorded(probe, Verdict.RELEASE, later, null, null)), 5,
                Duration.ofSeconds(1));
        assertThat(jdbc.queryForObject("SELECT count(*) FROM hooks WHERE hook_id = ? AND breaker = 'open' AND reopen_at <= now()"
                + " AND failures = 5 AND probe_id IS NULL AND probe_attempt IS NULL", Long.class, hook))
                .as("open, its cooldown over, its failures as they were").isEqualTo(1);
        assertThat(jdbc.queryForObject("SELECT status || ' ' || attempts FROM hook_deliveries WHERE id = ?", String.class, id))
                .as("the probe's row held again, its attempt given back").isEqualTo("held 1");
        jdbc.update("DELETE FROM hook_deliveries WHERE hook_id = ?", hook);
        jdbc.update("DELETE FROM hooks WHERE hook_id = ?", hook);
    }

    @Test
    void rowsADeletedHookLeftBehindNeitherStarveTheClaimNorStay() {
        // a deletion whose purge never ran: its rows are the oldest due in the table
        jdbc.update("INSERT INTO hook_deliveries (hook_id, event, message_id, idempotency_key, payload, due_at)"
                + " SELECT 'GONEHOOK0000000000000000000', 'message', 'm' || g, 'GONEHOOK0000000000000000000:m' || g, '{}',"
                + " now() - interval '1 day' FROM generate_series(1, 300) g");
        try (HookReceiver receiver = new HookReceiver()) {
            Api api = new Api(port);
            Api.Pair p = api.pair("dq-orphans");
            String hookId = api.post("/api/chats/" + p.chat() + "/hooks", p.alice(), Map.of("kind", "http", "url", receiver.url("/o")))
                    .body().get("hookId").asString();
            try (WsClient alice = WsClient.connectWelcomed(port, p.alice())) {
                alice.sendMessage("m", p.chat(), "x");
                String key = hookId + ":" + alice.answer("m").get("messageId").asString();
                await().atMost(Duration.ofSeconds(10)).until(() -> !receiver.requestsFor(key).isEmpty());
            }
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> jdbc.queryForObject(
                "SELECT count(*) FROM hook_deliveries WHERE hook_id = 'GONEHOOK0000000000000000000'", Long.class) == 0);
    }

    @Test
    void aTargetThatTricklesItsBodyIsCutAtTheCallTimeoutAndTriedAgain() {
        try (HookReceiver trickling = new HookReceiver()) {
            trickling.respond((r, before) -> before == 0 ? HookReceiver.Answer.trickle() : HookReceiver.Answer.status(200));
            Api api = new Api(port);
            Api.Pair p = api.pair("dq-trickle");
            String hookId = api.post("/api/chats/" + p.chat() + "/hooks", p.alice(), Map.of("kind", "http", "url", trickling.url("/t")))
                    .body().get("hookId").asString();
            try (WsClient alice = WsClient.connectWelcomed(port, p.alice())) {
                alice.sendMessage("m", p.chat(), "x");
                String key = hookId + ":" + alice.answer("m").get("messageId").asString();
                await().atMost(Duration.ofSeconds(30)).until(() -> trickling.requestsFor(key).size() >= 2);
                List<HookReceiver.Request> both = trickling.requestsFor(key);
                assertThat(both.get(1).header("Waterline-Attempt")).isEqualTo("2");
                assertThat(Duration.ofNanos(both.get(1).arrivedNanos() - both.get(0).arrivedNanos())).isLessThan(Duration.ofSeconds(10));
            }
        }
    }

    String hookOf(long deliveryId) {
        return jdbc.queryForObject("SELECT hook_id FROM hook_deliveries WHERE id = ?", String.class, deliveryId);
    }

    /** Inserts {@code n} dead letters of {@code hook} that died {@code ago} ago. */
    void deadLetters(String hook, String tag, int n, String ago) {
        jdbc.update("INSERT INTO hook_deliveries (hook_id, event, message_id, idempotency_key, payload, status, attempts, last_error, dead_at)"
                + " SELECT ?, 'message', ? || g, ? || ':' || ? || g, '{}', 'dead', 6, 'gave up', now() - ?::interval"
                + " FROM generate_series(1, ?) g", hook, tag, hook, tag, ago, n);
    }

    long deadLettersTagged(String hook, String tag) {
        return jdbc.queryForObject("SELECT count(*) FROM hook_deliveries WHERE hook_id = ? AND status = 'dead' AND message_id LIKE ?",
                Long.class, hook, tag + "%");
    }

    @Test
    void deadLettersOlderThanTheRetentionAreDeletedByTheMaintenancePassAndYoungerOnesStay() {
        String hook = hookOf(heldDelivery("dq-retention"));
        double before = registry.get("waterline.hook.dead.expired").counter().count();
        deadLetters(hook, "old", 3, "15 days");
        deadLetters(hook, "young", 2, "13 days");
        await().atMost(Duration.ofSeconds(15)).until(() -> deadLettersTagged(hook, "old") == 0);
        assertThat(deadLettersTagged(hook, "young")).as("younger than the 14-day retention").isEqualTo(2);
        assertThat(registry.get("waterline.hook.dead.expired").counter().count() - before).isGreaterThanOrEqualTo(3.0);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM hook_deliveries WHERE hook_id = ? AND status <> 'dead'", Long.class, hook))
                .as("the hook's delivery not done is untouched").isEqualTo(1);
        jdbc.update("DELETE FROM hook_deliveries WHERE hook_id = ?", hook);
    }

    @Test
    void theBacklogGaugesReadTheOldestDeliveryNotDoneAndCountUpToTheirCap() {
        String hook = hookOf(heldDelivery("dq-gauges"));
        jdbc.update("UPDATE hook_deliveries SET created_at = now() - interval '2 hours' WHERE hook_id = ?", hook);
        deadLetters(hook, "many", DeliveryQueueRepository.GAUGE_CAP + 50, "1 day");
        DeliveryQueueRepository.Backlog b = queue.backlog();
        assertThat(b.oldestSeconds()).as("the held delivery, two hours old").isGreaterThanOrEqualTo(7_200);
        assertThat(b.rows()).isBetween(1L, (long) DeliveryQueueRepository.GAUGE_CAP);
        assertThat(b.dead()).as("at least the cap reads as the cap").isEqualTo(DeliveryQueueRepository.GAUGE_CAP);
        jdbc.update("DELETE FROM hook_deliveries WHERE hook_id = ?", hook);
    }

    @Test
    void theWalkForOrphansVisitsEveryHookWithDeliveriesAStretchAtATimeAndCallsNoLiveHookAnOrphan() {
        // (that it finds the hooks that are gone, the maintenance pass shows: rowsADeletedHookLeftBehind…)
        String one = hookOf(heldDelivery("dq-walk1"));
        String two = hookOf(heldDelivery("dq-walk2"));
        try {
            List<String> visited = new java.util.ArrayList<>();
            List<String> orphans = new java.util.ArrayList<>();
            String after = "";
            do {
                DeliveryQueueRepository.Walk w = queue.orphans(after, 1);
                orphans.addAll(w.orphans());
                after = w.next();
                visited.add(after);
            } while (!after.isEmpty() && visited.size() < 100_000);
            assertThat(visited).as("each stretch goes on from the last hook it saw").contains(one, two).endsWith("");
            assertThat(orphans).doesNotContain(one, two);
        }
        finally {
            jdbc.update("DELETE FROM hook_deliveries WHERE hook_id IN (?, ?)", one, two);
        }
    }
}
