package dev.waterline.gateway;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.presence.Location;
import dev.waterline.session.ClientSession;
import dev.waterline.session.SessionRegistry;
import dev.waterline.watermark.IndexHealth;
import dev.waterline.watermark.WatermarkIndex;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Admission's decisions: a connection is let in and takes over its user's earlier one (4009 here,
 * or on the node Redis names, before it is welcomed); a stopping server refuses it (1001), before
 * or under the lock; in the cluster a connect Redis could not register is refused (1011) and the
 * index distrusted, while a single node lets it in and distrusts the index; every index failure
 * is counted.
 */
class AdmissionUnitTests {

    record Close(int code, String reason) {
    }

    /** A connection that records how it was closed. */
    static final class Session implements ClientSession {
        final String userId;
        final String sessionId;
        final List<Close> closes = new CopyOnWriteArrayList<>();

        Session(String userId, String sessionId) {
            this.userId = userId;
            this.sessionId = sessionId;
        }

        @Override public String userId() { return userId; }
        @Override public String sessionId() { return sessionId; }
        @Override public boolean isOpen() { return closes.isEmpty(); }
        @Override public boolean send(String frame) { return true; }
        @Override public long openedNanos() { return 0; }
        @Override public long lastReceivedNanos() { return 0; }
        @Override public long tokenGoodUntilMillis() { return Long.MAX_VALUE; }
        @Override public boolean admitSend() { return true; }
        @Override public void answered() { }
        @Override public boolean admitRate() { return true; }
        @Override public void close(int code, String reason) { closes.add(new Close(code, reason)); }
    }

    /** Redis as the test says: the previous epoch it names, or a failure. */
    static final class Epochs implements Admission.Epochs {
        volatile Optional<WatermarkIndex.SessionLocation> previous = Optional.empty();
        volatile RuntimeException failure;
        final List<String> connected = new CopyOnWriteArrayList<>();
        final List<String> disconnected = new CopyOnWriteArrayList<>();

        @Override
        public Optional<WatermarkIndex.SessionLocation> connect(ClientSession s, String node) {
            if (failure != null) {
                throw failure;
            }
            connected.add(s.sessionId());
            return previous;
        }

        @Override
        public void disconnect(ClientSession s) {
            if (failure != null) {
                throw failure;
            }
            disconnected.add(s.sessionId());
        }
    }

    final class Nodes implements Admission.Nodes {
        final boolean clustered;
        final List<String> closedElsewhere = new CopyOnWriteArrayList<>();

        Nodes(boolean clustered) {
            this.clustered = clustered;
        }

        @Override public String nodeId() { return "n1"; }
        @Override public boolean registrationRequired() { return clustered; }

        // as the adapters do: one node distrusts the index, a cluster's node leaves in one sweep
        @Override
        public void leftUnrecorded() {
            if (!clustered) {
                health.suspect();
            }
        }

        @Override
        public CompletableFuture<Boolean> close(Location where, int code, String reason) {
            closedElsewhere.add(where.node() + "/" + where.sessionId() + "/" + code);
            return CompletableFuture.completedFuture(true);
        }
    }

    final SessionRegistry sessions = new SessionRegistry();
    final IndexHealth health = new IndexHealth();
    final Epochs epochs = new Epochs();
    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    final GatewayMetrics metrics = new GatewayMetrics(new WaterlineMetrics(registry), sessions);

    Admission admission(Nodes nodes) {
        return new Admission(sessions, epochs, health, nodes, metrics);
    }

    double indexFailures(String at) {
        return registry.get("waterline.gateway.index.failures").tag("at", at).counter().count();
    }

    @Test
    void aNewConnectionIsAdmittedRegisteredAndMadeItsUsersEpoch() {
        Session alice = new Session("alice", "s1");

        Admission.Result result = admission(new Nodes(false)).admit(alice, () -> false);

        assertThat(result).isInstanceOf(Admission.Admitted.class);
        assertThat(sessions.get("alice")).isSameAs(alice);
        assertThat(epochs.connected).containsExactly("s1");
        assertThat(alice.closes).isEmpty();
        assertThat(indexFailures("connect")).isZero();
    }

    @Test
    void theUsersEarlierConnectionHereIsClosedWith4009() {
        Admission admission = admission(new Nodes(false));
        Session older = new Session("alice", "s1");
        Session newer = new Session("alice", "s2");
        admission.admit(older, () -> false);

        assertThat(admission.admit(newer, () -> false)).isInstanceOf(Admission.Admitted.class);

        assertThat(older.closes).containsExactly(new Close(4009, Admission.SUPERSEDED));
        assertThat(sessions.get("alice")).isSameAs(newer);
    }

    @Test
    void theUsersEarlierConnectionOnAnotherNodeIsClosedThereBeforeAdmission() {
        Nodes nodes = new Nodes(true);
        epochs.previous = Optional.of(new WatermarkIndex.SessionLocation("n2", "s0"));

        assertThat(admission(nodes).admit(new Session("alice", "s1"), () -> false)).isInstanceOf(Admission.Admitted.class);

        assertThat(nodes.closedElsewhere).containsExactly("n2/s0/4009");
    }

    @Test
    void anEarlierEpochOnThisNodeIsNotAskedOfAnotherNode() {
        Nodes nodes = new Nodes(true);
        epochs.previous = Optional.of(new WatermarkIndex.SessionLocation("n1", "s0"));

        admission(nodes).admit(new Session("alice", "s1"), () -> false);

        assertThat(nodes.closedElsewhere).isEmpty();
    }

    @Test
    void aStoppingServerRefusesWith1001BeforeRegistering() {
        Session alice = new Session("alice", "s1");

        Admission.Result result = admission(new Nodes(false)).admit(alice, () -> true);

        assertThat(result).isEqualTo(new Admission.Refused(1001, "server shutting down"));
        assertThat(sessions.get("alice")).isNull();
        assertThat(epochs.connected).isEmpty();
    }

    @Test
    void aServerThatStartsStoppingWhileRegisteringRefusesAndDistrustsTheIndex() {
        Admission admission = admission(new Nodes(false));
        Session older = new Session("alice", "s0");
        admission.admit(older, () -> false);
        long suspicions = health.suspicions();
        AtomicBoolean asked = new AtomicBoolean();
        Session alice = new Session("alice", "s1");

        // false at the first look, true under the lock
        Admission.Result result = admission.admit(alice, () -> !asked.compareAndSet(false, true));

        assertThat(result).isEqualTo(Admission.SHUTTING_DOWN);
        assertThat(sessions.get("alice")).isNull();
        assertThat(health.suspicions()).isGreaterThan(suspicions);
        assertThat(older.closes).as("the evicted one closed as the refused one").containsExactly(new Close(1001, "server shutting down"));
    }

    @Test
    void inTheClusterAConnectRedisCouldNotRegisterIsRefusedWith1011AndCounted() {
        epochs.failure = new IllegalStateException("redis down");
        long suspicions = health.suspicions();

        Admission.Result result = admission(new Nodes(true)).admit(new Session("alice", "s1"), () -> false);

        assertThat(result).isEqualTo(Admission.UNREGISTERED);
        assertThat(((Admission.Refused) result).code()).isEqualTo(1011);
        assertThat(sessions.get("alice")).isNull();
        assertThat(health.suspicions()).isGreaterThan(suspicions);
        assertThat(indexFailures("connect")).isEqualTo(1);
    }

    @Test
    void onOneNodeAConnectRedisCouldNotRegisterIsAdmittedTheIndexDistrustedAndCounted() {
        epochs.failure = new IllegalStateException("redis down");
        long suspicions = health.suspicions();
        Session alice = new Session("alice", "s1");

        assertThat(admission(new Nodes(false)).admit(alice, () -> false)).isInstanceOf(Admission.Admitted.class);

        assertThat(sessions.get("alice")).isSameAs(alice);
        assertThat(health.suspicions()).isGreaterThan(suspicions);
        assertThat(indexFailures("connect")).isEqualTo(1);
    }

    @Test
    void aConnectionThatLeavesIsUnregisteredAndDisconnected() {
        Admission admission = admission(new Nodes(false));
        Session alice = new Session("alice", "s1");
        admission.admit(alice, () -> false);

        admission.leave(alice, () -> false);

        assertThat(sessions.get("alice")).isNull();
        assertThat(epochs.disconnected).containsExactly("s1");
    }

    @Test
    void aDisconnectRedisFailsIsCountedAndDistrustsTheIndex() {
        Admission admission = admission(new Nodes(false));
        Session alice = new Session("alice", "s1");
        admission.admit(alice, () -> false);
        epochs.failure = new IllegalStateException("redis down");
        long suspicions = health.suspicions();

        admission.leave(alice, () -> false);
        admission.leave(alice, () -> false);   // no longer registered: nothing asked of Redis

        assertThat(sessions.get("alice")).isNull();
        assertThat(health.suspicions()).isGreaterThan(suspicions);
        assertThat(indexFailures("disconnect")).isEqualTo(1);
    }

    @Test
    void leavingWhileStoppingAsksNothingOfRedis() {
        Admission admission = admission(new Nodes(false));
        Session alice = new Session("alice", "s1");
        admission.admit(alice, () -> false);

        admission.leave(alice, () -> true);

        assertThat(sessions.get("alice")).isNull();
        assertThat(epochs.disconnected).isEmpty();
    }

    @Test
    void everyIndexFailureCounterShowsZeroFromTheStart() {
        assertThat(indexFailures("connect")).isZero();
        assertThat(indexFailures("disconnect")).isZero();
        assertThat(registry.get("waterline.gateway.close.failures").counter().count()).isZero();
    }
}
