package dev.waterline.reaper;

import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.presence.Location;
import dev.waterline.presence.NodeBus;
import dev.waterline.session.ClientSession;
import dev.waterline.session.SessionRegistry;
import dev.waterline.watermark.IndexHealth;
import dev.waterline.watermark.WatermarkIndex;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.stereotype.Component;

/**
 * The one way a client is withdrawn from live delivery. The connection is the epoch: a verdict
 * about a connection that is no longer registered (it closed, or its user reconnected) is a
 * no-op, so a stale verdict can never tear down the successor. Otherwise, under the user's lock,
 * the connection leaves the registry and the index (pending set, count, pin: its rows stop
 * holding the line down) and only then is its socket closed. Never an ack; history is untouched
 * (I3); the client recovers by resyncing on reconnect.
 */
@Component
public class Withdrawals {

    private static final Log log = LogFactory.getLog(Withdrawals.class);

    private final SessionRegistry sessions;
    private final WatermarkIndex watermark;
    private final WaterlineMetrics metrics;
    private final IndexHealth health;
    private final NodeBus bus;

    Withdrawals(SessionRegistry sessions, WatermarkIndex watermark, WaterlineMetrics metrics, IndexHealth health,
                NodeBus bus) {
        this.health = health;
        this.bus = bus;
        this.sessions = sessions;
        this.watermark = watermark;
        this.metrics = metrics;
    }

    /** Withdraws {@code s} if it is still registered; returns whether it was. */
    public boolean withdraw(ClientSession s, String reaper, int closeCode, String reason) {
        boolean withdrawn = sessions.underUserLock(s.userId(), () -> {
            if (!sessions.isCurrent(s)) {
                return false;
            }
            sessions.unregister(s);
            try {
                watermark.disconnect(s);
            }
            catch (RuntimeException e) {
                log.warn("Redis unavailable while withdrawing " + s.userId()
                        + "; its pin holds the line until the next index rebuild: " + e.getMessage());
                health.suspect();
            }
            return true;
        });
        if (withdrawn) {
            metrics.withdrawals(reaper).increment();
            s.close(closeCode, reason);
        }
        return withdrawn;
    }

    /**
     * Withdraws a connection of another node (the poller here judged it): it leaves live delivery
     * in Redis, if it is still its user's epoch, and its node is asked to close it. Returns whether
     * it was the epoch. The close is best effort: a connection whose epoch is gone is refused by
     * every delivery path, and its node closes it at its next delivery.
     */
    public boolean withdrawElsewhere(Location where, String reaper, int closeCode, String reason) {
        if (!watermark.disconnect(where.userId(), where.sessionId())) {
            return false;
        }
        metrics.withdrawals(reaper).increment();
        bus.close(where, closeCode, reason);
        return true;
    }
}
