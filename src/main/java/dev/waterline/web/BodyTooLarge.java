package dev.waterline.web;

import java.io.IOException;

/**
 * A request body that went past its limit while it was being read ({@link BodyLimit}): answered
 * {@code 413 too_large}, whoever was reading it (the JSON parser, or an endpoint that streams its
 * body, such as a file upload).
 */
public final class BodyTooLarge extends IOException {

    BodyTooLarge(long max) {
        super("request body larger than " + max + " bytes", null);
    }
}
