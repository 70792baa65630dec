package dev.waterline.watermark;

import org.springframework.stereotype.Component;

/**
 * Whether the Redis index may be trusted to be whole right now, and under which marker. It is
 * not trusted from start until the first rebuild, and again from any moment something suggests
 * it may have missed a write (a Redis error in the live path, a connection whose epoch Redis had
 * lost) until a rebuild that no such suspicion interrupted. While it is not trusted, GC deletes
 * nothing and the poller retires no row of a connected recipient.
 */
@Component
public class IndexHealth {

    private long suspicions;
    private long trustedMarker = -1;

    /** Something may have gone unrecorded: rebuild before trusting the index again. */
    public synchronized void suspect() {
        suspicions++;
        trustedMarker = -1;
    }

    /** The marker the index is trusted under, or -1 while it is not trusted. */
    public synchronized long trustedMarker() {
        return trustedMarker;
    }

    /** How many suspicions arose so far: a rebuild started after reading this trusts only if none arose meanwhile. */
    public synchronized long suspicions() {
        return suspicions;
    }

    /** Trusts the index under {@code marker}, unless a suspicion arose since {@code seen}. */
    public synchronized boolean trust(long marker, long seen) {
        if (suspicions != seen) {
            return false;
        }
        trustedMarker = marker;
        return true;
    }
}
