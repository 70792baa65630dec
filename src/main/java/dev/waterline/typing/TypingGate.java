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
 * user is all there is. A coalesced frame takes nothing; a shed one still counts as the user's
 * last, so that a burst under pressure is not let through frame by frame as the pressure eases.
 * Thread-safe: every connection's reading thread calls it.
 */
final class TypingGate {

    enum Verdict { ADMITTED, COALESCED, PRESSURE, RATE }

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
        boolean[] fresh = {false};
        last.compute(from.userId() + '\u0000' + chatId, (k, at) -> {
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
        return from.admitRate() ? Verdict.ADMITTED : Verdict.RATE;
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
