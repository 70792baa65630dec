package dev.waterline.load.peers;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The peer run's reconciliation, against a broker of this test's own that answers at once on the
 * publishing thread and can be told to lose, repeat, misroute or refuse: what the run reports must
 * follow what the broker did, message by message.
 */
class PeerRunUnitTests {

    @TempDir
    Path dir;

    /** Confirms and delivers every message at once, but as told by id. */
    static class InstantBroker implements PeerSystem {
        long dropId = -1;
        long repeatId = -1;
        long misrouteId = -1;
        long nackId = -1;
        /** Every n-th publish finds the window full (0: never). */
        int refuseEvery;
        int clients;
        Events events;
        long publishes;
        boolean closed;
        final ConcurrentLinkedQueue<Long> published = new ConcurrentLinkedQueue<>();

        @Override
        public String label() {
            return "instant";
        }

        @Override
        public String durability() {
            return "none";
        }

        @Override
        public void start(Path dir) {
        }

        @Override
        public void setUp(int clients, Events events) {
            this.clients = clients;
            this.events = events;
        }

        @Override
        public boolean publish(int sender, int recipient, long id, byte[] body) {
            publishes++;
            if (refuseEvery > 0 && publishes % refuseEvery == 0) {
                return false;
            }
            published.add(id);
            if (id == nackId) {
                events.failed(id, "nack");
                return true;
            }
            events.confirmed(id);
            if (id == dropId) {
                return true;
            }
            events.consumed(id == misrouteId ? (recipient + 2) % clients : recipient, body);
            if (id == repeatId) {
                events.consumed(recipient, body);
            }
            return true;
        }

        @Override
        public List<Long> pids() {
            return List.of();
        }

        @Override
        public Map<String, String> settings() {
            return Map.of();
        }

        @Override
        public void abort() {
            closed = true;
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    private static PeerRun.Config load() {
        return new PeerRun.Config(4, 400, Duration.ofSeconds(1), Duration.ofMillis(1), Duration.ofSeconds(2), 100);
    }

    @Test
    void everyConfirmedMessageConsumedOnceIsNeitherLostNorRepeated() throws Exception {
        InstantBroker broker = new InstantBroker();
        PeerRun.Result r = new PeerRun(broker, load(), System.err).execute(dir);
        assertThat(r.published()).isGreaterThan(100).isEqualTo(broker.published.size());
        assertThat(r.confirmed()).isEqualTo(r.published());
        assertThat(r.lost()).isZero();
        assertThat(r.duplicates()).isZero();
        assertThat(r.misrouted()).isZero();
        assertThat(r.deliverMs().get("count")).isEqualTo((double) r.published());
        assertThat(broker.closed).as("the broker is closed after the run").isTrue();
    }

    @Test
    void aConfirmedMessageNeverConsumedIsLostAndARepeatIsADuplicate() throws Exception {
        InstantBroker broker = new InstantBroker();
        broker.dropId = 17;
        broker.repeatId = 23;
        PeerRun.Result r = new PeerRun(broker, load(), System.err).execute(dir);
        assertThat(r.lost()).isEqualTo(1);
        assertThat(r.duplicates()).isEqualTo(1);
    }

    @Test
    void aMessageConsumedByAnotherClientIsMisroutedAndCountsAsLost() throws Exception {
        InstantBroker broker = new InstantBroker();
        broker.misrouteId = 5;
        PeerRun.Result r = new PeerRun(broker, load(), System.err).execute(dir);
        assertThat(r.misrouted()).isEqualTo(1);
        assertThat(r.lost()).as("its recipient never had it").isEqualTo(1);
    }

    @Test
    void aRefusedMessageIsNeitherConfirmedNorLostAndANackIsNotLost() throws Exception {
        InstantBroker broker = new InstantBroker();
        broker.refuseEvery = 10;
        broker.nackId = 3;
        PeerRun.Result r = new PeerRun(broker, load(), System.err).execute(dir);
        assertThat(r.refused()).isPositive();
        assertThat(r.offered()).isEqualTo(r.published() + r.refused());
        assertThat(r.failed()).isEqualTo(1);
        assertThat(r.confirmed()).isEqualTo(r.published() - 1);
        assertThat(r.lost()).isZero();
    }

    @Test
    void aNackedMessageDeliveredAnywayDoesNotEndTheDrainBeforeALateConfirmedOne() throws Exception {
        java.util.concurrent.ScheduledExecutorService later = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        InstantBroker broker = new InstantBroker() {
            @Override
            public boolean publish(int sender, int recipient, long id, byte[] body) {
                if (id == 3) {
                    // refused, yet stored and delivered all the same (a publish timeout whose message did land)
                    published.add(id);
                    events.failed(id, "timeout");
                    events.consumed(recipient, body);
                    return true;
                }
                if (id == 5) {
                    // confirmed at once, delivered only after the load has ended
                    published.add(id);
                    events.confirmed(id);
                    later.schedule(() -> events.consumed(recipient, body), 1500, java.util.concurrent.TimeUnit.MILLISECONDS);
                    return true;
                }
                return super.publish(sender, recipient, id, body);
            }
        };
        try {
            PeerRun.Result r = new PeerRun(broker, new PeerRun.Config(4, 400, Duration.ofSeconds(1), Duration.ofMillis(1),
                    Duration.ofSeconds(10), 100), System.err).execute(dir);
            assertThat(r.failed()).isEqualTo(1);
            assertThat(r.lost()).as("the drain waited for the late delivery").isZero();
        }
        finally {
            later.shutdownNow();
        }
    }

    @Test
    void theBodyCarriesItsIdSendTimeAndRecipientAndIsPaddedToThePayload() {
        byte[] body = PeerRun.bodyOf(42, 123456789L, 7, 100);
        assertThat(body).hasSize(100);
        ByteBuffer b = ByteBuffer.wrap(body);
        assertThat(b.getLong()).isEqualTo(42);
        assertThat(b.getLong()).isEqualTo(123456789L);
        assertThat(b.getInt()).isEqualTo(7);
        assertThat(PeerRun.bodyOf(1, 1, 1, 4)).as("never shorter than its header").hasSize(PeerRun.HEADER_BYTES);
    }

    @Test
    void idStatesCountConsumptionsAndSetEachFlagOnce() {
        PeerRun.IdStates s = new PeerRun.IdStates();
        long far = (1L << 16) * 3 + 5;
        s.ensure(far);
        assertThat(s.setFlag(far, 1)).as("nothing before").isZero();
        assertThat(s.setFlag(far, 1)).as("the flag, once set, is seen").isEqualTo(1);
        assertThat(s.addConsumed(far)).as("the flag, no consumption yet").isEqualTo(1);
        assertThat(s.addConsumed(far) >>> 8).as("one consumption before").isEqualTo(1);
        assertThat(s.get(far) >>> 8).isEqualTo(2);
        assertThat(s.get(far) & 1).isEqualTo(1);
        assertThat(s.addConsumed(far + (1L << 16))).as("an id never published").isEqualTo(-1);
        assertThat(s.setFlag(-1, 1)).isEqualTo(-1);
    }

    @Test
    void anOddNumberOfClientsCannotBePaired() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new PeerRun(new InstantBroker(),
                        new PeerRun.Config(3, 10, Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(1), 100), System.err))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
