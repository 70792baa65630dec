package dev.waterline.gateway;

import dev.waterline.session.Frames;

/**
 * Puts together a frame the container delivered in parts (its receive buffer is smaller than the
 * largest frame allowed, to keep idle connections small), up to a frame's limit in UTF-8 bytes.
 * Touched only by the one thread that delivers a connection's frames.
 */
final class FrameAssembler {

    private StringBuilder partialText;
    private long partialBytes;
    /** The frame being received was refused as too large: its remaining parts are dropped unread. */
    private boolean discarding;

    /**
     * Adds one part of a text frame; returns the whole frame once {@code last}, null while more is
     * to come. Throws {@link FrameTooLarge} once the parts exceed {@code maxBytes} (UTF-8), forgets
     * them and drops the frame's remaining parts: the container goes on handing them over after
     * the 1009 close, and the tail of a refused frame must never be read as a frame of its own.
     */
    String text(String part, boolean last, long maxBytes) {
        if (discarding) {
            discarding = !last;
            return null;
        }
        if (last && partialText == null) {
            return part;
        }
        partialBytes += Frames.utf8Length(part);
        if (partialBytes > maxBytes) {
            partialText = null;
            partialBytes = 0;
            discarding = !last;
            throw new FrameTooLarge();
        }
        if (partialText == null) {
            partialText = new StringBuilder(part.length() * 2);
        }
        partialText.append(part);
        if (!last) {
            return null;
        }
        String whole = partialText.toString();
        partialText = null;
        partialBytes = 0;
        return whole;
    }

    /** Counts a binary frame's parts; true once the frame is whole. Throws {@link FrameTooLarge} past {@code maxBytes}. */
    boolean binary(int bytes, boolean last, long maxBytes) {
        if (discarding) {
            discarding = !last;
            return false;
        }
        partialBytes += bytes;
        if (partialBytes > maxBytes) {
            partialBytes = 0;
            discarding = !last;
            throw new FrameTooLarge();
        }
        if (last) {
            partialBytes = 0;
        }
        return last;
    }

    /** A frame past {@code max-frame-bytes}: the gateway closes the connection with 1009. */
    static final class FrameTooLarge extends RuntimeException {
        FrameTooLarge() {
            super("frame too large", null, false, false);
        }
    }
}
