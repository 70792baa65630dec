package dev.waterline.web;

import java.util.LinkedHashMap;
import java.util.Map;

import dev.waterline.input.InputGate;
import dev.waterline.lifecycle.Failures;
import dev.waterline.metrics.WaterlineMetrics;
import io.micrometer.core.instrument.Counter;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.tomcat.util.http.InvalidParameterException;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ResponseEntity;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.web.ErrorResponse;
import org.springframework.web.HttpMediaTypeNotSupportedException;
import org.springframework.web.bind.MissingServletRequestParameterException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.method.annotation.MethodArgumentTypeMismatchException;

/**
 * Maps every failure of a REST request to PROTOCOL.md's error body,
 * {@code {"error":"<code>","message":"…"}}: the ones the API names (400 invalid, 404 not_found,
 * 429 rate_limited, 503 unavailable), Spring MVC's own (405, 406, 415 …, by their status), and
 * anything unexpected (500 internal: logged with its stack trace and counted in
 * {@code waterline_api_errors_total}, never Spring's default body). A message that echoes input
 * is made writable first ({@link InputGate#printable}).
 */
@RestControllerAdvice
class ApiErrors {

    private static final Log log = LogFactory.getLog(ApiErrors.class);

    private final Counter unexpected;
    private final Counter tooSlow;

    ApiErrors(WaterlineMetrics metrics) {
        this.unexpected = metrics.counter("waterline.api.errors", "REST requests that failed unexpectedly (500)");
        this.tooSlow = metrics.counter("waterline.api.bodies.too.slow",
                "REST request bodies refused (408) for arriving slower than waterline.api.body-min-rate");
    }

    @ExceptionHandler(ApiException.class)
    ResponseEntity<Map<String, String>> api(ApiException e) {
        ResponseEntity<Map<String, String>> answer = body(e.status(), e.code(), e.getMessage());
        if (e.retryAfterSeconds() >= 0) {
            return ResponseEntity.status(answer.getStatusCode())
                    .header(org.springframework.http.HttpHeaders.RETRY_AFTER, Long.toString(e.retryAfterSeconds()))
                    .body(answer.getBody());
        }
        return answer;
    }

    /**
     * A body that came more slowly than its pace (a trickle holding the connection): 408, and the
     * connection closes (the rest of the body will not be read).
     */
    @ExceptionHandler(Pace.TooSlow.class)
    ResponseEntity<Map<String, String>> tooSlow(Pace.TooSlow e) {
        tooSlow.increment();
        return ResponseEntity.status(HttpStatus.REQUEST_TIMEOUT).header(org.springframework.http.HttpHeaders.CONNECTION, "close")
                .contentType(org.springframework.http.MediaType.APPLICATION_JSON)
                .body(body(HttpStatus.REQUEST_TIMEOUT, "too_slow", e.getMessage()).getBody());
    }

    @ExceptionHandler(BodyTooLarge.class)
    ResponseEntity<Map<String, String>> tooLarge(BodyTooLarge e) {
        return body(HttpStatus.CONTENT_TOO_LARGE, "too_large", e.getMessage());
    }

    @ExceptionHandler({HttpMessageNotReadableException.class, MethodArgumentTypeMismatchException.class,
            MissingServletRequestParameterException.class, HttpMediaTypeNotSupportedException.class})
    ResponseEntity<Map<String, String>> unreadable(Exception e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof BodyTooLarge tooLarge) {
                return body(HttpStatus.CONTENT_TOO_LARGE, "too_large", tooLarge.getMessage());
            }
            if (t instanceof Pace.TooSlow slow) {
                return tooSlow(slow);
            }
        }
        return body(HttpStatus.BAD_REQUEST, "invalid", "malformed request: " + Failures.describe(e));
    }

    /**
     * Tomcat's parameter parsing failed: a form body ({@code x=%FF}) that is not percent-encoded
     * UTF-8 (a malformed query never gets here, {@link RequestTargets} refuses it first). The
     * client's mistake, so a 400 logged at DEBUG; the exception's text, which quotes the
     * undecodable parameter, is not echoed.
     */
    @ExceptionHandler(InvalidParameterException.class)
    ResponseEntity<Map<String, String>> undecodable(InvalidParameterException e) {
        if (log.isDebugEnabled()) {
            log.debug("refused a request whose parameters cannot be decoded: " + e.getMessage());
        }
        return body(HttpStatus.BAD_REQUEST, "invalid", "malformed request: a parameter is not percent-encoded UTF-8");
    }

    @ExceptionHandler(Exception.class)
    ResponseEntity<Map<String, String>> other(Exception e) {
        if (e instanceof ErrorResponse known) {
            HttpStatusCode status = known.getStatusCode();
            return body(status, code(status.value()), known.getBody().getDetail());
        }
        if (Failures.infrastructure(e)) {
            log.warn("database unavailable: " + Failures.describe(e));
            return body(HttpStatus.SERVICE_UNAVAILABLE, "unavailable", "the database could not be reached");
        }
        unexpected.increment();
        log.error("REST request failed unexpectedly", e);
        return body(HttpStatus.INTERNAL_SERVER_ERROR, "internal", "the server failed to answer this request");
    }

    /** The error code PROTOCOL.md uses for an HTTP status. */
    static String code(int status) {
        return switch (status) {
            case 400, 415, 422 -> "invalid";
            case 401 -> "unauthorized";
            case 403 -> "forbidden";
            case 404 -> "not_found";
            case 405 -> "method_not_allowed";
            case 406 -> "not_acceptable";
            case 409 -> "conflict";
            case 413 -> "too_large";
            case 429 -> "rate_limited";
            case 503 -> "unavailable";
            default -> status >= 500 ? "internal" : "invalid";
        };
    }

    static ResponseEntity<Map<String, String>> body(HttpStatusCode status, String code, String message) {
        Map<String, String> body = new LinkedHashMap<>();
        body.put("error", code);
        body.put("message", message == null ? code : InputGate.printable(message));
        // the type is set, not negotiated: an error answers in JSON whatever the request accepts (an
        // EventSource accepts only text/event-stream, and must still see the 404 or 429)
        return ResponseEntity.status(status).contentType(org.springframework.http.MediaType.APPLICATION_JSON).body(body);
    }
}
