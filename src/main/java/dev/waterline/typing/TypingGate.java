package dev.waterline.typing;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;

import dev.waterline.session.ClientSession;

/**
 * Which typing frames go on, cheapest test first: a frame inside {@code interval} of the last one
 * let through for the same user and chat is coalesced into it (the push already made says the
 * same); while the group commit is behind ({@code pressure} at or above {@code shedAt}) typing is
 * shed, so that it never takes a writer's time from sends; then it takes one token of the
 * connection's rate, which sends share. One user has one session, so what this node remembers of a
 * user is all there is (a user who reconnects to another node inside an interval may be pushed
 * once more). A coalesced frame takes nothing; a shed one still counts as the user's
 * last, so that a burst under pressure is not let through frame by frame as the pressure eases; one
 * over the rate is forgotten (it cost nothing), and so is one for a chat the sender is not in
 * ({@link #forget}), so that the next is answered {@code not_found} again.
 * Thread-safe: every connection's reading thread calls it.
 */
final class TypingGate {

    enum Verdict { ADMITTED, COALESCED, PRESSURE, RATE }

    /** Past this many remembered users and chats an admission prunes first: a client naming ever new chat ids cannot grow the map past it for long. */
    static final int PRUNE_ABOVE = 100_000;

    private final long intervalNanos;
    private final double shedAt;
    private final DoubleSupplier pressure;
    private final LongSupplier clock;
    /** user NUL chat → when its last frame was let through the coalescing ({@link #clock}); see {@link #prune}. */
    private final Map<String, Long> last = new ConcurrentHashMap<>();

    TypingGate(Duration interval, double shedAt, DoubleSupplier pressure, LongSupplier clock) {
        this.intervalNanos = interval.toNanos();
        this.shedAt = shedAt;
        this.pressure = pressure;
        this.clock = clock;
    }

    Verdict admit(ClientSession from, String chatId) {
        long now = clock.getAsLong();
        if (last.size() > PRUNE_ABOVE) {
            prune();
        }
        String key = key(from, chatId);
        boolean[] fresh = {false};
        last.compute(key, (k, at) -> {
            if (at != null && now - at < intervalNanos) {
                return at;
            }
            fresh[0] = true;
            return now;
        });
        if (!fresh[0]) {
            return Verdict.COALESCED;
        }
        if (pressure.getAsDouble() >= shedAt) {
            return Verdict.PRESSURE;
        }
        if (!from.admitRate()) {
            last.remove(key, now);   // nothing was spent on it: the next frame is judged afresh
            return Verdict.RATE;
        }
        return Verdict.ADMITTED;
    }

    /** Forgets the user's last frame in the chat (it named a chat they are not in): the next one is checked, and answered, again. */
    void forget(ClientSession from, String chatId) {
        last.remove(key(from, chatId));
    }

    private static String key(ClientSession from, String chatId) {
        return from.userId() + '\u0000' + chatId;
    }

    /** Forgets every user and chat whose last frame is an interval old: the map holds the last interval's typists only. */
    void prune() {
        long now = clock.getAsLong();
        last.values().removeIf(at -> now - at >= intervalNanos);
    }

    /** Users and chats remembered (for the bound's test). */
    int remembered() {
        return last.size();
    }
}
