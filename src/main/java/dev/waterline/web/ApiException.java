package dev.waterline.web;

import org.springframework.http.HttpStatus;

/** A REST failure with the status and error code PROTOCOL.md gives it. */
public class ApiException extends RuntimeException {

    private final HttpStatus status;
    private final String code;
    private final long retryAfterSeconds;

    public ApiException(HttpStatus status, String code, String message) {
        this(status, code, message, -1);
    }

    /** With a {@code Retry-After} header of {@code retryAfterSeconds} (none when negative). */
    public ApiException(HttpStatus status, String code, String message, long retryAfterSeconds) {
        super(message, null, false, false);
        this.status = status;
        this.code = code;
        this.retryAfterSeconds = retryAfterSeconds;
    }

    public long retryAfterSeconds() {
        return retryAfterSeconds;
    }

    public static ApiException invalid(String message) {
        return new ApiException(HttpStatus.BAD_REQUEST, "invalid", message);
    }

    /** Absent, or present but the caller is not a member: the two are indistinguishable. */
    public static ApiException notFound() {
        return new ApiException(HttpStatus.NOT_FOUND, "not_found", "no such chat");
    }

    public HttpStatus status() {
        return status;
    }

    public String code() {
        return code;
    }
}
