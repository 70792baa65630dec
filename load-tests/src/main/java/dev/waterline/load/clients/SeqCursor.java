package dev.waterline.load.clients;

/**
 * A stream reader's place: the next seq it expects, and what arrived out of order (an earlier seq
 * again: a duplicate; a later one: the seqs skipped count as gaps, and the cursor moves past it).
 * Advanced by one thread (the reader's connection); {@code next} may be read by others.
 */
public final class SeqCursor {

    public volatile long next;
    public long duplicates;
    public long gaps;

    public SeqCursor(long from) {
        this.next = from;
    }

    /** Takes one chunk's seq; true when it was the one expected. */
    public boolean take(long seq) {
        if (seq == next) {
            next++;
            return true;
        }
        if (seq < next) {
            duplicates++;
        }
        else {
            gaps += seq - next;
            next = seq + 1;
        }
        return false;
    }
}
