package dev.waterline.reaper;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

import dev.waterline.lifecycle.Loops;
import dev.waterline.lifecycle.Workers;
import dev.waterline.session.ClientSession;
import dev.waterline.session.SessionRegistry;
import dev.waterline.watermark.WatermarkIndex;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * The idle and overload reapers (the attempts reaper, {@link AttemptsReaper}, is asked by the
 * poller, which meets the rows it judges), and the end of a session whose token expired.
 *
 * <p>Loop (one loop of {@link Loops}, every {@code interval}): withdraw with 4001 every connection
 * whose token is no longer accepted ({@code exp} plus the clock skew: the same instant a reconnect
 * with that token would be refused, so the client must fetch a fresh one); withdraw with 4000
 * every connection that has sent nothing for {@code idle-timeout}; read every user's pending count in one call and
 * withdraw with 4008 the connection of every user holding more than {@code max-pending}.
 * Connections younger than {@code reconnect-grace} are spared. A client can trip two reapers at
 * once; the second withdrawal is a no-op. On a Redis error the overload check waits for the next
 * round (the idle check needs no Redis). Stops with the context.
 */
@Component
class Reapers implements SmartLifecycle {

    static final String LOOP = "reapers";

    private final ReaperProperties properties;
    private final Loops loops;
    private final Clock clock;
    private final SessionRegistry sessions;
    private final WatermarkIndex watermark;
    private final Withdrawals withdrawals;
    private volatile boolean running;
    private Thread thread;

    Reapers(ReaperProperties properties, SessionRegistry sessions, WatermarkIndex watermark, Withdrawals withdrawals,
            Loops loops, Clock clock) {
        this.loops = loops;
        this.clock = clock;
        this.properties = properties;
        this.sessions = sessions;
        this.watermark = watermark;
        this.withdrawals = withdrawals;
    }

    void round() {
        long now = System.nanoTime();
        long idle = properties.idleTimeout().toNanos();
        long wallMillis = clock.millis();
        for (ClientSession s : sessions.all()) {
            if (wallMillis >= s.tokenGoodUntilMillis()) {
                withdrawals.withdraw(s, "expired", 4001, "the session's token expired; reconnect with a fresh token");
                continue;
            }
            if (spared(s, now)) {
                continue;
            }
            if (now - s.lastReceivedNanos() > idle) {
                withdrawals.withdraw(s, "idle", 4000, "idle: nothing received for " + properties.idleTimeout().toSeconds() + "s");
            }
        }
        Map<String, Long> counts;
        long countedAt = System.nanoTime();
        try {
            counts = watermark.pendingCounts();
        }
        catch (RuntimeException e) {
            loops.failed(LOOP, e);   // the overload check waits for the next round
            return;
        }
        for (var e : counts.entrySet()) {
            if (e.getValue() > properties.maxPending()) {
                ClientSession s = sessions.get(e.getKey());
                // a connection opened after the counts were read is not the one they counted
                if (s != null && s.openedNanos() < countedAt && !spared(s, now)) {
                    withdrawals.withdraw(s, "overload", 4008, "withdrawn: more than " + properties.maxPending() + " unacked deliveries");
                }
            }
        }
    }

    private boolean spared(ClientSession s, long now) {
        return now - s.openedNanos() < properties.reconnectGrace().toNanos();
    }

    private void step() {
        LockSupport.parkNanos(properties.interval().toNanos());
        round();
    }

    @Override
    public void start() {
        running = true;
        thread = loops.start(LOOP, "reapers", () -> running, this::step);
    }

    @Override
    public void stop() {
        running = false;
        Workers.stop(thread, Duration.ofSeconds(5));
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 200;
    }
}
