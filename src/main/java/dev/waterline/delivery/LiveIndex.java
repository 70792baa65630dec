package dev.waterline.delivery;

import dev.waterline.session.ClientSession;
import dev.waterline.session.SessionRegistry;
import dev.waterline.watermark.WatermarkIndex;
import org.springframework.stereotype.Component;

/**
 * The delivery paths' access to the watermark index. It also heals the one way the index and the
 * registry can disagree: Redis not naming a connection the registry holds as current (Redis was
 * down when it connected, or lost its data since). Then the connection's epoch is re-asserted
 * under its user's lock and the delivery recorded again; the next reclaim pass, seeing its marker
 * gone too, rebuilds everything else from the outbox.
 */
@Component
class LiveIndex {

    private final WatermarkIndex watermark;
    private final SessionRegistry sessions;

    LiveIndex(WatermarkIndex watermark, SessionRegistry sessions) {
        this.watermark = watermark;
        this.sessions = sessions;
    }

    /** Records ids as written to {@code to}; false when {@code to} is no longer current (nothing recorded). */
    boolean deliver(ClientSession to, long[] ids) {
        return watermark.deliver(to, ids) >= 0 || reasserted(to) && watermark.deliver(to, ids) >= 0;
    }

    /** Records ids as owed to {@code to}; false when {@code to} is no longer current (nothing recorded). */
    boolean shed(ClientSession to, long[] ids) {
        return watermark.shed(to, ids) || reasserted(to) && watermark.shed(to, ids);
    }

    private boolean reasserted(ClientSession to) {
        if (!sessions.isCurrent(to)) {
            return false;
        }
        return sessions.underUserLock(to.userId(), () -> {
            if (!sessions.isCurrent(to)) {
                return false;
            }
            watermark.connect(to);
            return true;
        });
    }

    /** Per id its status for {@code to} (see {@link WatermarkIndex#status}); null when {@code to} is not its user's epoch in Redis. */
    int[] status(ClientSession to, long[] ids) {
        return watermark.status(to, ids);
    }
}
