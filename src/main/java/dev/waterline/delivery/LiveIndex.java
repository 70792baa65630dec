package dev.waterline.delivery;

import dev.waterline.session.ClientSession;
import dev.waterline.session.SessionRegistry;
import dev.waterline.watermark.WatermarkIndex;
import org.springframework.stereotype.Component;

/**
 * Records deliveries in the watermark index for both delivery paths, and heals the one way the
 * index and the registry can disagree: Redis not naming a connection that the registry holds as
 * current (Redis was down when it connected, or lost its data since). Then the connection's epoch
 * is re-asserted under its user's lock and the delivery recorded again.
 */
@Component
class LiveIndex {

    private final WatermarkIndex watermark;
    private final SessionRegistry sessions;

    LiveIndex(WatermarkIndex watermark, SessionRegistry sessions) {
        this.watermark = watermark;
        this.sessions = sessions;
    }

    WatermarkIndex.Verdicts deliver(ClientSession to, long[] ids) {
        WatermarkIndex.Verdicts verdicts = watermark.deliver(to, ids);
        if (verdicts.current() || !sessions.isCurrent(to)) {
            return verdicts;
        }
        boolean reasserted = sessions.underUserLock(to.userId(), () -> {
            if (!sessions.isCurrent(to)) {
                return false;
            }
            watermark.connect(to);
            return true;
        });
        return reasserted ? watermark.deliver(to, ids) : verdicts;
    }

    void forgetAcked(String user, long[] ids) {
        watermark.forgetAcked(user, ids);
    }
}
