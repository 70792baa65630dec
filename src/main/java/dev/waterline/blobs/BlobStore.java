package dev.waterline.blobs;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * Where file contents live, by key (the blob's id). An adapter reads and writes a bounded piece
 * at a time: {@link #write} consumes its stream as it goes and {@link #read} writes as it reads, so
 * a file of any size costs the heap a piece, never the whole. Contents are written once and never
 * changed; the owner's row (which names the key) says whether a content is complete.
 */
public interface BlobStore {

    /**
     * Stores everything {@code in} yields under {@code key}. Reading {@code in} may throw (the client
     * went away, the body grew past its limit): then whatever was stored of it is left for the
     * removal ledger (its owner's row is deleted), and the exception is thrown on.
     */
    void write(String key, InputStream in) throws IOException;

    /** Writes bytes {@code from} (inclusive) to {@code to} (exclusive) of {@code key}'s content to {@code out}. */
    void read(String key, long from, long to, OutputStream out) throws IOException;

    /** Removes {@code key}'s content; removing what is not there is no error. */
    void delete(String key);
}
