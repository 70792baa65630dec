package dev.waterline.presence.local;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.waterline.commit.ChatMessage;
import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.outbox.OutboxRow;
import dev.waterline.presence.Location;
import dev.waterline.session.SessionRegistry;
import dev.waterline.support.RecordingSession;
import dev.waterline.watermark.IndexHealth;
import dev.waterline.watermark.MarkerStore;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The single-node adapters do the local thing, so that no caller needs to know it runs on one
 * node: nobody is elsewhere, every other node (there is none) trusts the index, what is handed to
 * a node arrives here, and a frame reaches the named connection while it is its user's current one.
 */
class LocalAdaptersUnitTests {

    @Test
    void onOneNodeNobodyIsElsewhereAndNoOtherNodeWithholdsItsTrust() {
        IndexHealth health = new IndexHealth();
        LocalPresence presence = new LocalPresence(health, new WaterlineMetrics(new SimpleMeterRegistry()));

        assertThat(presence.elsewhere(List.of("alice", "bob"))).isEmpty();
        assertThat(presence.locateIfWhole(List.of("alice"), new MarkerStore.Marker(1, 1))).hasValue(Map.of());
        assertThat(presence.othersTrust(7)).isTrue();
        assertThat(presence.liveNodes()).isEqualTo(1);
        assertThat(presence.othersMayHold()).as("nothing to hand to another node").isFalse();
        assertThat(presence.sweepDeadNodes()).isZero();
        assertThat(presence.forgetOrphans()).isZero();
        assertThat(presence.registrationRequired()).isFalse();
    }

    @Test
    void aConnectionThatLeavesUnrecordedOnOneNodeMakesTheIndexSuspect() {
        IndexHealth health = new IndexHealth();
        LocalPresence presence = new LocalPresence(health, new WaterlineMetrics(new SimpleMeterRegistry()));
        long before = health.suspicions();

        presence.leftUnrecorded();

        assertThat(health.suspicions()).isEqualTo(before + 1);
    }

    @Test
    void whatIsHandedToANodeArrivesOnThisOne() {
        LocalNodeBus bus = new LocalNodeBus(new SessionRegistry());
        List<String> arrived = new ArrayList<>();
        bus.onDeliveries((rows, poller) -> rows.forEach(r -> arrived.add(r.recipientId() + (poller ? "/poller" : "/fast"))));

        bus.deliver(LocalPresence.NODE, List.of(row(1, "bob")), false);
        bus.deliver(LocalPresence.NODE, List.of(row(2, "carol")), true);

        assertThat(arrived).containsExactly("bob/fast", "carol/poller");
    }

    @Test
    void aFrameReachesTheNamedConnectionOnlyWhileItIsItsUsersCurrentOne() {
        SessionRegistry sessions = new SessionRegistry();
        RecordingSession current = new RecordingSession("bob", "s-2");
        sessions.register(current);
        LocalNodeBus bus = new LocalNodeBus(sessions);

        bus.send(new Location("bob", LocalPresence.NODE, "s-1"), "stale");
        bus.send(new Location("bob", LocalPresence.NODE, "s-2"), "read");
        bus.send(new Location("carol", LocalPresence.NODE, "s-3"), "nobody");

        assertThat(current.frames()).containsExactly("read");
    }

    @Test
    void aCloseAskedOfAnotherNodeGetsTheAnswerOfANodeThatIsNotAlive() {
        LocalNodeBus bus = new LocalNodeBus(new SessionRegistry());

        assertThat(bus.close(new Location("bob", "node-two", "s-1"), 4009, "superseded").getNow(true))
                .as("answered at once").isFalse();
    }

    private static OutboxRow row(long id, String recipient) {
        return new OutboxRow(id, recipient, new ChatMessage("chat", id, "m-" + id, "alice", null, "hi", "message", null),
                "2026-12-04T00:00:00Z", 0, 0);
    }
}
