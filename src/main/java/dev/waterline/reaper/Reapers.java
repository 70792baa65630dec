package dev.waterline.reaper;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

import dev.waterline.lifecycle.Workers;
import dev.waterline.session.ClientSession;
import dev.waterline.session.SessionRegistry;
import dev.waterline.watermark.WatermarkIndex;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * The idle and overload reapers (the attempts reaper lives where re-sends are decided, in the
 * poller).
 *
 * <p>Loop (one virtual thread, every {@code interval}): withdraw with 4000 every connection that
 * has sent nothing for {@code idle-timeout}; read every user's pending count in one call and
 * withdraw with 4008 the connection of every user holding more than {@code max-pending}.
 * Connections younger than {@code reconnect-grace} are spared. A client can trip two reapers at
 * once; the second withdrawal is a no-op. On a Redis error the overload check waits for the next
 * round (the idle check needs no Redis). Stops with the context.
 */
@Component
class Reapers implements SmartLifecycle {

    private static final Log log = LogFactory.getLog(Reapers.class);

    private final ReaperProperties properties;
    private final SessionRegistry sessions;
    private final WatermarkIndex watermark;
    private final Withdrawals withdrawals;
    private volatile boolean running;
    private Thread thread;

    Reapers(ReaperProperties properties, SessionRegistry sessions, WatermarkIndex watermark, Withdrawals withdrawals) {
        this.properties = properties;
        this.sessions = sessions;
        this.watermark = watermark;
        this.withdrawals = withdrawals;
    }

    void round() {
        long now = System.nanoTime();
        long idle = properties.idleTimeout().toNanos();
        for (ClientSession s : sessions.all()) {
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
            log.debug("overload reaper skipped a round (Redis): " + e);
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

    private void loop() {
        while (running) {
            LockSupport.parkNanos(properties.interval().toNanos());
            try {
                round();
            }
            catch (RuntimeException e) {
                log.warn("reaper round failed: " + e.getMessage());
            }
        }
    }

    @Override
    public void start() {
        running = true;
        thread = Thread.ofVirtual().name("reapers").start(this::loop);
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
