package dev.waterline.delivery;

import java.util.List;

import dev.waterline.session.ClientSession;
import dev.waterline.session.SessionRegistry;
import dev.waterline.watermark.IndexHealth;
import dev.waterline.watermark.WatermarkIndex;
import org.springframework.stereotype.Component;

/**
 * The delivery paths' access to the watermark index. It also heals the one way the index and the
 * registry can disagree: Redis not naming a connection the registry holds as current (Redis was
 * down when it connected, or lost its data since). Then the connection's epoch is re-asserted
 * under its user's lock (keeping whatever was recorded for it meanwhile), the delivery recorded
 * again, and the index distrusted until the next reclaim pass has rebuilt it from the outbox.
 */
@Component
class LiveIndex {

    private final WatermarkIndex watermark;
    private final SessionRegistry sessions;
    private final IndexHealth health;

    LiveIndex(WatermarkIndex watermark, SessionRegistry sessions, IndexHealth health) {
        this.watermark = watermark;
        this.sessions = sessions;
        this.health = health;
    }

    /** Records ids as written to {@code to}; false when {@code to} is no longer current (nothing recorded). */
    boolean deliver(ClientSession to, long[] ids) {
        return watermark.deliver(to, ids) >= 0 || reasserted(to) && watermark.deliver(to, ids) >= 0;
    }

    /**
     * {@link #deliver(ClientSession, long[])} for a whole batch in one script call; per group, in
     * order, whether its frames may be written. Only a group whose connection Redis no longer
     * names takes a second, single call after the re-assert. A failure of the batched call itself
     * is thrown (the caller writes the batch unrecorded).
     */
    boolean[] deliver(List<WatermarkIndex.Group> groups) {
        long[] pending = watermark.deliver(groups);
        boolean[] ok = new boolean[pending.length];
        for (int i = 0; i < ok.length; i++) {
            WatermarkIndex.Group g = groups.get(i);
            try {
                ok[i] = pending[i] >= 0 || reasserted(g.session()) && watermark.deliver(g.session(), g.ids()) >= 0;
            }
            catch (RuntimeException redisDown) {
                // As a single call failing did: this recipient's frames go out unrecorded, and
                // the index is distrusted until rebuilt. The other groups keep their verdicts.
                health.suspect();
                ok[i] = true;
            }
        }
        return ok;
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
            if (watermark.reassert(to)) {
                // Redis had lost this epoch, so it may have lost more: rebuild before trusting it.
                health.suspect();
            }
            return true;
        });
    }

    /**
     * Per id its status for {@code to} (see {@link WatermarkIndex#status}), or null when the
     * index is not trusted to be whole right now or Redis does not name {@code to} as its user's
     * epoch: then nothing may be concluded from a row's absence.
     */
    int[] status(ClientSession to, long[] ids) {
        long marker = health.trustedMarker();
        return marker < 0 ? null : watermark.status(to, marker, ids);
    }

    /** Something may have gone unrecorded in Redis. */
    void suspect() {
        health.suspect();
    }
}
