package dev.waterline.online;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import dev.waterline.support.Api;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.data.redis.core.StringRedisTemplate;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Presence on one node (PROTOCOL.md §10; across two and a node's death: ClusterIntegrationTests,
 * NodeDeathIntegrationTests): a user coming online is pushed to the connected users who share a
 * chat with them and nobody else; going offline is pushed a debounce after they left, with when
 * they were last seen; a reconnect inside the debounce is no change; the query answers co-members
 * only; a hidden user shows offline without a last seen. The test profile's debounce is 2 s.
 */
@WaterlineIntegrationTest
class PresenceIntegrationTests {

    @LocalServerPort
    int port;

    @Autowired
    StringRedisTemplate redis;

    @Value("${waterline.presence.debounce}")
    Duration debounce;

    static boolean presenceOf(JsonNode f, String user, String state) {
        return "presence".equals(f.path("type").asString()) && user.equals(f.path("userId").asString())
                && state.equals(f.path("state").asString());
    }

    static JsonNode next(WsClient c, String user, String state) {
        return c.next(f -> presenceOf(f, user, state), Duration.ofSeconds(15));
    }

    /** What {@code c} received about {@code user}'s presence so far, after a round trip (ping, pong). */
    static List<JsonNode> presenceSoFar(WsClient c, String user) {
        c.send(Map.of("type", "ping"));
        c.next("pong");
        return c.received().stream().filter(f -> "presence".equals(f.path("type").asString())
                && user.equals(f.path("userId").asString())).toList();
    }

    /** Until nothing of {@code user}'s is due any more: every deferred settle of theirs has run. */
    void settled(String user) {
        await().atMost(Duration.ofSeconds(15)).until(() -> redis.opsForZSet().score(OnlineState.DUE, user) == null);
    }

    @Test
    void aUserComingOnlineIsPushedToConnectedCoMembersOnly() {
        Api api = new Api(port);
        String alice = api.token("pr-on-alice");
        api.createChat(alice, "pr-on-bob");
        try (WsClient bob = WsClient.connectWelcomed(port, api.token("pr-on-bob"));
             WsClient carol = WsClient.connectWelcomed(port, api.token("pr-on-carol"));
             WsClient a = WsClient.connectWelcomed(port, alice)) {
            JsonNode online = next(bob, "pr-on-alice", "online");
            assertThat(online.get("lastSeen").isNull()).isTrue();
            assertThat(presenceSoFar(carol, "pr-on-alice")).as("carol shares no chat with alice").isEmpty();
            assertThat(presenceSoFar(a, "pr-on-alice")).as("nobody is told of themselves").isEmpty();
            assertThat(presenceSoFar(bob, "pr-on-alice")).as("one push").hasSize(1);
        }
    }

    @Test
    void goingOfflineIsPushedADebounceAfterLeavingWithWhenTheUserWasLastSeen() {
        Api api = new Api(port);
        Api.Pair p = api.pair("pr-off");
        try (WsClient bob = WsClient.connectWelcomed(port, p.bob())) {
            WsClient a = WsClient.connectWelcomed(port, p.alice());
            next(bob, "pr-off-alice", "online");
            Instant before = Instant.now();
            long leftAt = System.nanoTime();
            a.close();
            JsonNode offline = next(bob, "pr-off-alice", "offline");
            Duration after = Duration.ofNanos(bob.arrivedAtNanos(offline) - leftAt);
            assertThat(after).as("not before the debounce").isGreaterThanOrEqualTo(debounce.minusMillis(100));
            Instant seen = Instant.parse(offline.get("lastSeen").asString());
            assertThat(seen).isBetween(before.minusSeconds(1), before.plus(after));

            Api.Response r = api.get("/api/users/pr-off-alice/presence", p.bob());
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.body().get("state").asString()).isEqualTo("offline");
            assertThat(r.body().get("lastSeen").asString()).isEqualTo(offline.get("lastSeen").asString());
        }
    }

    @Test
    void aReconnectInsideTheDebounceIsNoChange() {
        Api api = new Api(port);
        Api.Pair p = api.pair("pr-re");
        try (WsClient bob = WsClient.connectWelcomed(port, p.bob())) {
            WsClient a = WsClient.connectWelcomed(port, p.alice());
            next(bob, "pr-re-alice", "online");
            long leftAt = System.nanoTime();
            a.close();
            // the leave is stamped (so the debounce is what keeps it from being said) before she is back
            await().atMost(Duration.ofSeconds(15)).until(() -> redis.opsForHash().get(OnlineState.key("pr-re-alice"), "left") != null);
            try (WsClient again = WsClient.connectWelcomed(port, p.alice())) {
                Duration away = Duration.ofNanos(System.nanoTime() - leftAt);
                org.junit.jupiter.api.Assumptions.assumeTrue(away.compareTo(debounce) < 0,
                        "the reconnect took " + away + ", longer than the debounce: this machine is too slow to tell");
                // the settle the leave deferred has run: it found alice back
                await().atMost(Duration.ofSeconds(15)).until(() -> redis.opsForZSet().score(OnlineState.DUE, "pr-re-alice") == null
                        && redis.opsForHash().get(OnlineState.key("pr-re-alice"), "left") == null);
                assertThat(presenceSoFar(bob, "pr-re-alice")).as("online once, then no change").hasSize(1);
                assertThat(api.get("/api/users/pr-re-alice/presence", p.bob()).body().get("state").asString()).isEqualTo("online");
            }
        }
    }

    @Test
    void theQueryAnswersAboutCoMembersAndOneselfAndIsNotFoundForAnyoneElse() {
        Api api = new Api(port);
        Api.Pair p = api.pair("pr-q");
        String stranger = api.token("pr-q-stranger");
        try (WsClient a = WsClient.connectWelcomed(port, p.alice())) {
            await().atMost(Duration.ofSeconds(15)).until(() ->
                    "online".equals(api.get("/api/users/pr-q-alice/presence", p.bob()).body().get("state").asString()));
            JsonNode self = api.get("/api/users/pr-q-alice/presence", p.alice()).body();
            assertThat(self.get("state").asString()).isEqualTo("online");
            assertThat(self.get("hidden").asBoolean()).isFalse();
            Api.Response unknown = api.get("/api/users/pr-q-nobody/presence", p.alice());
            Api.Response foreign = api.get("/api/users/pr-q-alice/presence", stranger);
            for (Api.Response r : List.of(unknown, foreign)) {
                assertThat(r.status()).isEqualTo(404);
                assertThat(r.body().get("error").asString()).isEqualTo("not_found");
            }
            assertThat(foreign.text()).as("a stranger cannot tell a user who exists").isEqualTo(unknown.text());
            JsonNode never = api.get("/api/users/pr-q-bob/presence", p.alice()).body();
            assertThat(never.get("state").asString()).as("bob never connected").isEqualTo("offline");
            assertThat(never.has("lastSeen") && !never.get("lastSeen").isNull()).isFalse();
        }
    }

    @Test
    void aHiddenUserShowsOfflineWithoutLastSeenAndShowingAgainTellsTheCoMembers() {
        Api api = new Api(port);
        Api.Pair p = api.pair("pr-hid");
        try (WsClient bob = WsClient.connectWelcomed(port, p.bob());
             WsClient a = WsClient.connectWelcomed(port, p.alice())) {
            next(bob, "pr-hid-alice", "online");
            assertThat(api.get("/api/me/settings", p.alice()).body().get("presence").asString()).isEqualTo("visible");
            Api.Response hide = api.call("PUT", "/api/me/settings", p.alice(), "{\"presence\":\"hidden\"}");
            assertThat(hide.status()).isEqualTo(200);
            assertThat(hide.body().get("presence").asString()).isEqualTo("hidden");
            JsonNode offline = next(bob, "pr-hid-alice", "offline");
            assertThat(offline.get("lastSeen").isNull()).isTrue();

            JsonNode seenByBob = api.get("/api/users/pr-hid-alice/presence", p.bob()).body();
            assertThat(seenByBob.get("state").asString()).isEqualTo("offline");
            assertThat(seenByBob.has("lastSeen")).isFalse();
            assertThat(seenByBob.has("hidden")).as("nobody else learns it is a setting").isFalse();
            JsonNode self = api.get("/api/users/pr-hid-alice/presence", p.alice()).body();
            assertThat(self.get("state").asString()).isEqualTo("online");
            assertThat(self.get("hidden").asBoolean()).isTrue();

            Api.Response show = api.call("PUT", "/api/me/settings", p.alice(), "{\"presence\":\"visible\"}");
            assertThat(show.status()).isEqualTo(200);
            next(bob, "pr-hid-alice", "online");
            assertThat(presenceSoFar(bob, "pr-hid-alice")).extracting(f -> f.get("state").asString())
                    .containsExactly("online", "offline", "online");
        }
    }

    @Test
    void aHiddenUsersComingAndGoingIsNotPushed() {
        Api api = new Api(port);
        Api.Pair p = api.pair("pr-hid2");
        assertThat(api.call("PUT", "/api/me/settings", p.alice(), "{\"presence\":\"hidden\"}").status()).isEqualTo(200);
        try (WsClient bob = WsClient.connectWelcomed(port, p.bob())) {
            WsClient a = WsClient.connectWelcomed(port, p.alice());
            await().atMost(Duration.ofSeconds(15)).until(() -> "online".equals(
                    redis.opsForHash().get(OnlineState.key("pr-hid2-alice"), "state")));
            a.close();
            settled("pr-hid2-alice");
            await().atMost(Duration.ofSeconds(15)).until(() -> "offline".equals(
                    redis.opsForHash().get(OnlineState.key("pr-hid2-alice"), "state")));
            // a push would follow the announcement within a pass of the loop: none comes for a while after
            await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(3)).until(() -> presenceSoFar(bob, "pr-hid2-alice").isEmpty());
        }
    }

    @Autowired
    OnlineState state;

    @Test
    void aSettleReadBeforeALaterLeaveOrDeferralChangesNothingAndLeavesItsDueEntry() {
        String user = "pr-ver-alice";
        state.leave(List.of(user));
        String read = state.versions(List.of(user)).getFirst();
        state.leave(List.of(user));   // a later leave, after the reading
        assertThat(state.settle(user, true, read).outcome()).isEqualTo(OnlineState.Settled.STALE);
        assertThat(redis.opsForZSet().score(OnlineState.DUE, user)).as("the later leave's entry stands").isNotNull();
        assertThat(redis.opsForHash().get(OnlineState.key(user), "left")).isNotNull();
        String now = state.versions(List.of(user)).getFirst();
        // under the current version the same settle is judged: online, never announced, said at once
        OnlineState.Settled s = state.settle(user, true, now);
        assertThat(s.outcome()).isEqualTo(OnlineState.Settled.ANNOUNCE);
        assertThat(s.state()).isEqualTo("online");
        assertThat(redis.opsForZSet().score(OnlineState.DUE, user)).isNull();
        // going offline within the debounce of that announcement is deferred, and the deferral raises the version
        OnlineState.Settled later = state.settle(user, false, null);
        assertThat(later.outcome()).isEqualTo(OnlineState.Settled.LATER);
        assertThat(state.settle(user, false, now).outcome()).as("a reading from before the deferral").isEqualTo(OnlineState.Settled.STALE);
        assertThat(redis.opsForZSet().score(OnlineState.DUE, user)).isNotNull();
    }

    @Test
    void theAuditTakesOfflineAUserAnnouncedOnlineWhoIsConnectedNowhereWithNothingDue() {
        Api api = new Api(port);
        Api.Pair p = api.pair("pr-aud");
        try (WsClient bob = WsClient.connectWelcomed(port, p.bob())) {
            // what a node that died between a close and its stamp leaves: announced online, no session, nothing due
            redis.opsForHash().putAll(OnlineState.key("pr-aud-alice"), Map.of("state", "online", "at", "0"));
            redis.opsForSet().add(OnlineState.ON, "pr-aud-alice");
            JsonNode offline = next(bob, "pr-aud-alice", "offline");
            assertThat(offline.get("lastSeen").isNull()).isFalse();
            assertThat(redis.opsForSet().isMember(OnlineState.ON, "pr-aud-alice")).isFalse();
        }
    }

    @Test
    void badSettingsAreInvalidAndChangeNothing() {
        Api api = new Api(port);
        String alice = api.token("pr-bad-alice");
        for (String body : List.of("{}", "{\"presence\":\"invisible\"}", "{\"presence\":7}", "[]", "nonsense")) {
            Api.Response r = api.call("PUT", "/api/me/settings", alice, body);
            assertThat(r.status()).as(body).isEqualTo(400);
            assertThat(r.body().get("error").asString()).as(body).isEqualTo("invalid");
        }
        assertThat(api.get("/api/me/settings", alice).body().get("presence").asString()).isEqualTo("visible");
    }

    @Test
    void aChatCreatedWhileBothAreConnectedCarriesTheirPresenceFromThen() {
        Api api = new Api(port);
        String alice = api.token("pr-join-alice");
        String dave = api.token("pr-join-dave");
        try (WsClient a = WsClient.connectWelcomed(port, alice)) {
            WsClient d = WsClient.connectWelcomed(port, dave);
            await().atMost(Duration.ofSeconds(15)).until(() -> "online".equals(
                    redis.opsForHash().get(OnlineState.key("pr-join-dave"), "state")));
            api.createChat(alice, "pr-join-dave");
            d.close();
            JsonNode offline = next(a, "pr-join-dave", "offline");
            assertThat(offline.get("lastSeen").isNull()).isFalse();
        }
    }
}
