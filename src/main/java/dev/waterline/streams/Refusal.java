package dev.waterline.streams;

import org.springframework.http.HttpStatus;

/**
 * Why a stream request was not done, with its answer: the error code of PROTOCOL.md §6 (and §2, §3),
 * its HTTP status, and for {@code gap} and {@code conflict} the seq the producer must send next.
 * Nothing of a refused request is stored.
 */
record Refusal(String code, HttpStatus status, String message, Long expectedSeq) {

    static Refusal gap(long expected) {
        return new Refusal("gap", HttpStatus.CONFLICT, "the next chunk of this stream is seq " + expected, expected);
    }

    static Refusal conflict(long expected) {
        return new Refusal("conflict", HttpStatus.CONFLICT,
                "a chunk of this request differs from the one stored under its seq; the next is seq " + expected, expected);
    }

    static Refusal closed(String state) {
        return new Refusal("closed", HttpStatus.CONFLICT, "the stream is " + state + "; nothing more can be appended", null);
    }

    static Refusal forbidden() {
        return new Refusal("forbidden", HttpStatus.FORBIDDEN, "only the stream's producer may append to or complete it", null);
    }

    static Refusal notFound() {
        return new Refusal("not_found", HttpStatus.NOT_FOUND, "no such stream", null);
    }

    static Refusal invalid(String message) {
        return new Refusal("invalid", HttpStatus.BAD_REQUEST, message, null);
    }

    static Refusal tooLarge(String message) {
        return new Refusal("too_large", HttpStatus.PAYLOAD_TOO_LARGE, message, null);
    }

    static Refusal unavailable(String message) {
        return new Refusal("unavailable", HttpStatus.SERVICE_UNAVAILABLE, message, null);
    }

    static Refusal overloaded() {
        return new Refusal("overloaded", HttpStatus.SERVICE_UNAVAILABLE, "the server is saturated; nothing stored, retry later", null);
    }

    static Refusal rateLimited(String message) {
        return new Refusal("rate_limited", HttpStatus.TOO_MANY_REQUESTS, message, null);
    }
}
