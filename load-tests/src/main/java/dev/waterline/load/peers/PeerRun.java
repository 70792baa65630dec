package dev.waterline.load.peers;

import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

import dev.waterline.load.chat.LoadRun;
import dev.waterline.load.run.CpuMeter;
import dev.waterline.load.run.Report;
import dev.waterline.load.run.Stats;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * One run of the chat load against a broker instead of Waterline ({@link PeerSystem}), with the
 * same shape as {@link LoadRun}'s: clients paired (client {@code i} writes to {@code i ^ 1}), sends
 * offered open-loop at the target rate (ramped linearly) round-robin over the clients, the same
 * payload, then a drain, then a reconciliation message by message.
 *
 * <p>Each message carries its id, its send time and its recipient in its first 20 bytes. A send
 * the sender's window of unconfirmed messages cannot take is refused (not made), as Waterline's
 * {@code overloaded}. At the end every confirmed message must have been consumed by its recipient
 * at least once: one that was not is lost; each further delivery is a duplicate; one consumed by
 * another client is misrouted. Latency is send → first consumption, over the run and over its
 * second half; the steady rate is the median of the per-second confirmations over the second half.
 * CPU time of the broker and of this generator is read over the second half of the load.
 */
final class PeerRun {

    /** The load: as {@code waterline-load}'s options of the same names. */
    record Config(int clients, double rate, Duration duration, Duration rampUp, Duration drain, int payloadBytes) {
    }

    /** What one run measured. CPU is in seconds over {@code windowSeconds}, during which {@code windowMessages} were confirmed. */
    record Result(String label, String durability, Map<String, String> settings, int clients, double rate,
                  long offered, long refused, long published, long confirmed, long failed,
                  long lost, long duplicates, long misrouted, long steadyPerSecond,
                  Map<String, Double> deliverMs, Map<String, Double> deliverSteadyMs,
                  Map<String, Double> cpuSeconds, long windowMessages, double windowSeconds) {
    }

    static final int HEADER_BYTES = 20;
    /** How long past the load's end a publish may still be held (a broker blocking its publishers) before the broker is closed. */
    static final Duration HELD_PUBLISH_LIMIT = Duration.ofSeconds(60);
    private static final int CONFIRMED = 1, FAILED = 2, CONSUMED_ONE = 1 << 8;

    private final PeerSystem system;
    private final Config cfg;
    private final PrintStream err;
    private final IdStates states = new IdStates();
    private final LongAdder confirmed = new LongAdder();
    private final LongAdder failed = new LongAdder();
    /** Messages confirmed or failed: counted once each, by whichever answer came first. */
    private final LongAdder answered = new LongAdder();
    /** Set when a publish was held so long past the load's end that the broker was killed: the run measured nothing. */
    private volatile boolean aborted;
    private final LongAdder misrouted = new LongAdder();
    /** Messages both confirmed and consumed: counted by whichever of the two came second. */
    private final LongAdder confirmedConsumed = new LongAdder();
    private final Histogram deliver = new ConcurrentHistogram(3_600_000_000L, 3);
    private final Histogram deliverSteady = new ConcurrentHistogram(3_600_000_000L, 3);
    private final List<Long> confirmedEachSecond = Collections.synchronizedList(new ArrayList<>());
    private volatile long secondHalfFromNanos = Long.MAX_VALUE;
    private final Map<String, String> failures = Collections.synchronizedMap(new LinkedHashMap<>());

    PeerRun(PeerSystem system, Config cfg, PrintStream err) {
        if (cfg.clients() < 2 || cfg.clients() % 2 != 0) {
            throw new IllegalArgumentException("a peer run pairs its clients: give an even number of at least 2");
        }
        this.system = system;
        this.cfg = cfg;
        this.err = err;
    }

    /** The message's bytes: id, send time ({@link System#nanoTime}), recipient, then padding to the payload size. */
    static byte[] bodyOf(long id, long sentNanos, int recipient, int payloadBytes) {
        ByteBuffer b = ByteBuffer.allocate(Math.max(HEADER_BYTES, payloadBytes));
        b.putLong(id).putLong(sentNanos).putInt(recipient);
        while (b.hasRemaining()) {
            b.put((byte) 'x');
        }
        return b.array();
    }

    /** Starts the broker under {@code dir}, offers the load, drains, reconciles; the broker is stopped whatever happens. */
    Result execute(Path dir, CpuMeter.Part... moreParts) throws Exception {
        Files.createDirectories(dir);
        try (system) {
            system.start(dir);
            system.setUp(cfg.clients(), new Events());
            List<CpuMeter.Part> parts = new ArrayList<>();
            parts.add(CpuMeter.pids("system", system.pids()));
            parts.add(CpuMeter.pid("generator", ProcessHandle.current().pid()));
            parts.addAll(List.of(moreParts));
            CpuMeter meter = new CpuMeter(parts);
            long[] published = new long[1];
            long[] offered = new long[2];
            CpuMeter.Sample[] window = new CpuMeter.Sample[2];
            long[] windowConfirmed = new long[2];
            offer(published, offered, () -> {
                window[0] = meter.sample();
                windowConfirmed[0] = confirmed.sum();
            });
            window[1] = meter.sample();
            windowConfirmed[1] = confirmed.sum();
            if (aborted) {
                throw new IllegalStateException("a publish was held " + HELD_PUBLISH_LIMIT + " past the load's end (the broker"
                        + " blocked its publishers); the broker was killed and the run measured nothing");
            }
            drain(published[0]);
            return reconcile(published[0], offered, window, windowConfirmed);
        }
    }

    private void offer(long[] published, long[] offeredAndRefused, Runnable atHalf) throws Exception {
        long start = System.nanoTime();
        long end = start + cfg.duration().toNanos();
        long half = start + cfg.duration().toNanos() / 2;
        secondHalfFromNanos = half;
        // the per-second rate is read by a timer of its own: the offering thread may be held in a
        // publish (a broker's flow control) and must not stretch a "second"
        ScheduledExecutorService perSecond = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().daemon()
                .name("peer-rate").unstarted(r));
        long[] last = {start, 0};
        perSecond.scheduleAtFixedRate(() -> {
            long now = System.nanoTime();
            if (now > end + TimeUnit.MILLISECONDS.toNanos(500)) {
                return;   // a publish held past the load's end: the seconds after it are not the load's
            }
            long c = confirmed.sum();
            confirmedEachSecond.add(Stats.perSecond(c - last[1], now - last[0]));
            last[0] = now;
            last[1] = c;
        }, 1, 1, TimeUnit.SECONDS);
        // a publish held past the load's end by a broker that blocks its publishers ends the run:
        // the broker's processes are killed under it (a close would wait on the same blocked
        // socket), and the run is reported as having measured nothing
        ScheduledExecutorService watchdog = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().daemon()
                .name("peer-watchdog").unstarted(r));
        java.util.concurrent.ScheduledFuture<?> abort = watchdog.schedule(() -> {
            err.println("waterline-load peers: a publish was still held " + HELD_PUBLISH_LIMIT + " after the load's end: killing "
                    + system.label() + "; the run measured nothing");
            aborted = true;
            system.abort();
        }, cfg.duration().plus(HELD_PUBLISH_LIMIT).toNanos(), TimeUnit.NANOSECONDS);
        try {
            offerUntil(start, end, half, atHalf, published, offeredAndRefused);
        }
        finally {
            perSecond.shutdownNow();
            abort.cancel(false);
            watchdog.shutdown();
            if (!watchdog.awaitTermination(1, TimeUnit.MINUTES)) {
                err.println("waterline-load peers: the watchdog did not end within a minute");
            }
        }
    }

    private void offerUntil(long start, long end, long half, Runnable atHalf, long[] published, long[] offeredAndRefused) {
        boolean halfTaken = false;
        double rampSeconds = Math.max(1, cfg.rampUp().toNanos()) / 1e9;
        long issued = 0;
        long id = 0;
        int next = 0;
        while (true) {
            long now = System.nanoTime();
            if (now >= end) {
                break;
            }
            if (!halfTaken && now >= half) {
                atHalf.run();
                halfTaken = true;
            }
            double target = LoadRun.offeredBy(cfg.rate(), rampSeconds, (now - start) / 1e9);
            while (issued < (long) target) {
                int sender = next;
                next = (next + 1) % cfg.clients();
                issued++;
                int recipient = sender ^ 1;
                long sentNanos = System.nanoTime();
                byte[] body = bodyOf(id, sentNanos, recipient, cfg.payloadBytes());
                states.ensure(id);
                boolean made;
                try {
                    made = system.publish(sender, recipient, id, body);
                }
                catch (Exception e) {
                    fail(id, "publish: " + e);
                    made = true;
                }
                if (made) {
                    id++;
                }
                else {
                    offeredAndRefused[1]++;
                }
            }
            LockSupport.parkNanos(200_000);
        }
        offeredAndRefused[0] = issued;
        published[0] = id;
    }

    /** Waits until every published message is answered and every confirmed one consumed, or the drain budget is spent. */
    private void drain(long published) throws InterruptedException {
        long deadline = System.nanoTime() + cfg.drain().toNanos();
        while (System.nanoTime() < deadline) {
            if (answered.sum() >= published && confirmedConsumed.sum() >= confirmed.sum()) {
                return;
            }
            TimeUnit.MILLISECONDS.sleep(100);
        }
        err.println("waterline-load peers: drain budget spent: " + (published - answered.sum())
                + " unanswered, " + (confirmed.sum() - confirmedConsumed.sum()) + " confirmed and not yet consumed");
    }

    private Result reconcile(long published, long[] offered, CpuMeter.Sample[] window, long[] windowConfirmed) {
        long lost = 0;
        long duplicates = 0;
        for (long id = 0; id < published; id++) {
            int s = states.get(id);
            int consumed = s >>> 8;
            if ((s & CONFIRMED) != 0 && consumed == 0) {
                lost++;
            }
            if (consumed > 1) {
                duplicates += consumed - 1;
            }
        }
        if (!failures.isEmpty()) {
            err.println("waterline-load peers: failed publishes, first of each kind: " + failures);
        }
        Map<String, Double> cpu = window[0] == null ? Map.of() : window[1].secondsSince(window[0]);
        double windowSeconds = window[0] == null ? 0 : (window[1].atNanos() - window[0].atNanos()) / 1e9;
        return new Result(system.label(), system.durability(), system.settings(), cfg.clients(), cfg.rate(),
                offered[0], offered[1], published, confirmed.sum(), failed.sum(), lost, duplicates, misrouted.sum(),
                steady(), Report.percentiles(deliver), Report.percentiles(deliverSteady), cpu,
                windowConfirmed[1] - windowConfirmed[0], windowSeconds);
    }

    private long steady() {
        synchronized (confirmedEachSecond) {
            return Stats.medianOfSecondHalf(confirmedEachSecond);
        }
    }

    private void fail(long id, String why) {
        int before = states.setFlag(id, FAILED);
        if (before >= 0 && (before & FAILED) == 0) {
            failed.increment();
            if ((before & CONFIRMED) == 0) {
                answered.increment();
            }
        }
        failures.putIfAbsent(why.length() > 60 ? why.substring(0, 60) : why, why);
    }

    private final class Events implements PeerSystem.Events {

        @Override
        public void confirmed(long id) {
            int before = states.setFlag(id, CONFIRMED);
            if (before >= 0 && (before & CONFIRMED) == 0) {
                confirmed.increment();
                if ((before & FAILED) == 0) {
                    answered.increment();
                }
                if (before >>> 8 > 0) {
                    confirmedConsumed.increment();
                }
            }
        }

        @Override
        public void failed(long id, String why) {
            fail(id, why);
        }

        @Override
        public void consumed(int recipient, byte[] body) {
            ByteBuffer b = ByteBuffer.wrap(body);
            long id = b.getLong();
            long sentNanos = b.getLong();
            int to = b.getInt();
            if (to != recipient) {
                misrouted.increment();
                return;
            }
            int before = states.addConsumed(id);
            if (before >= 0 && before >>> 8 == 0) {
                if ((before & CONFIRMED) != 0) {
                    confirmedConsumed.increment();
                }
                Stats.record(deliver, sentNanos);
                if (sentNanos >= secondHalfFromNanos) {
                    Stats.record(deliverSteady, sentNanos);
                }
            }
        }
    }

    /**
     * Per message id (0, 1, 2 … as published): confirmed and failed flags and a count of
     * consumptions, in chunks allocated as ids grow, so that millions of messages cost 4 bytes
     * each and no map entry.
     */
    static final class IdStates {

        private static final int CHUNK_BITS = 16;
        private static final int CHUNK = 1 << CHUNK_BITS;
        private final AtomicReferenceArray<AtomicIntegerArray> chunks = new AtomicReferenceArray<>(1 << 14);

        /** Makes room for {@code id}; called before the id is published, so callbacks never find its chunk missing. */
        void ensure(long id) {
            int c = (int) (id >>> CHUNK_BITS);
            if (chunks.get(c) == null) {
                chunks.compareAndSet(c, null, new AtomicIntegerArray(CHUNK));
            }
        }

        int get(long id) {
            AtomicIntegerArray a = chunks.get((int) (id >>> CHUNK_BITS));
            return a == null ? 0 : a.get((int) (id & (CHUNK - 1)));
        }

        /**
         * Sets {@code flag}; returns the state before (flags, and consumptions above bit 8), or -1
         * for an id never published. One atomic step, so that of a confirmation and a first
         * consumption racing, exactly one sees the other.
         */
        int setFlag(long id, int flag) {
            AtomicIntegerArray a = chunk(id);
            if (a == null) {
                return -1;
            }
            return a.getAndUpdate((int) (id & (CHUNK - 1)), v -> v | flag);
        }

        /** Counts one consumption of {@code id}; returns the state before it, as {@link #setFlag}. */
        int addConsumed(long id) {
            AtomicIntegerArray a = chunk(id);
            if (a == null) {
                return -1;
            }
            return a.getAndAdd((int) (id & (CHUNK - 1)), CONSUMED_ONE);
        }

        private AtomicIntegerArray chunk(long id) {
            long c = id >>> CHUNK_BITS;
            return id < 0 || c >= chunks.length() ? null : chunks.get((int) c);
        }
    }
}
