package dev.waterline.streams;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.waterline.ingest.InboundProperties;
import dev.waterline.lifecycle.Failures;
import dev.waterline.lifecycle.ThrottledLog;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;

/**
 * Waiting for a stream request's answer (it comes after the commit), and the failures on the way
 * that are still answered: a wait that ends without an answer (answered {@code unavailable}: the
 * outcome is unknown, and a retry stores nothing twice), and a failed upload whose row could not be
 * dropped at once (the sweep of abandoned uploads drops it later). Each is counted
 * ({@code waterline_streams_answer_waits_failed_total{by}},
 * {@code waterline_streams_upload_drops_failed_total}) and logged at warn, at most once a second
 * per kind, with its cause.
 */
@Component
class Answers {

    private static final Log log = LogFactory.getLog(Answers.class);

    /** How long the echo bot waits for each answer. */
    static final long BOT_WAIT_MILLIS = 30_000;

    private final long restWaitMillis;
    private final StreamMetrics metrics;
    private final ThrottledLog restWaits = new ThrottledLog();
    private final ThrottledLog botWaits = new ThrottledLog();
    private final ThrottledLog uploadDrops = new ThrottledLog();

    @Autowired
    Answers(StreamProperties properties, InboundProperties inbound, StreamMetrics metrics) {
        // a request is answered after its commit: at most the commit's own timeout, and a margin
        this(Math.max(properties.commitTimeout().toMillis(), inbound.commitTimeout().toMillis())
                + inbound.linger().toMillis() + 5_000, metrics);
    }

    Answers(long restWaitMillis, StreamMetrics metrics) {
        this.restWaitMillis = restWaitMillis;
        this.metrics = metrics;
    }

    /** A REST request's answer: what the commit answered, or {@code unavailable} when none came in time. */
    Object await(CompletableFuture<Object> f) {
        try {
            return f.get(restWaitMillis, TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failed("rest", restWaits, "interrupted waiting for a stream request's answer", e);
            return Refusal.unavailable("interrupted; the outcome is unknown, retry (a retry stores nothing twice)");
        }
        catch (TimeoutException | ExecutionException e) {
            failed("rest", restWaits, "no answer to a stream request within " + restWaitMillis + " ms", e);
            return Refusal.unavailable("no answer in time; the outcome is unknown, retry (a retry stores nothing twice)");
        }
    }

    /** The echo bot's answer: what the commit answered, or {@code unavailable} when none came within {@value #BOT_WAIT_MILLIS} ms. */
    Object awaitForBot(CompletableFuture<Object> f) {
        try {
            return f.get(BOT_WAIT_MILLIS, TimeUnit.MILLISECONDS);
        }
        catch (Exception e) {
            failed("echo_bot", botWaits, "the echo bot got no answer to its request within " + BOT_WAIT_MILLIS + " ms", e);
            return Refusal.unavailable("no answer in time");
        }
    }

    /** A failed upload's row and parts could not be dropped now; the sweep of abandoned uploads will. */
    void uploadNotDropped(String blobId, RuntimeException e) {
        metrics.uploadDropFailed();
        long held = uploadDrops.admit();
        if (held >= 0) {
            log.warn("the row of failed upload " + blobId + " could not be dropped now; the sweep of abandoned uploads will"
                    + ThrottledLog.more(held), e);
        }
    }

    private void failed(String by, ThrottledLog throttle, String what, Exception e) {
        metrics.answerWaitFailed(by);
        long held = throttle.admit();
        if (held < 0) {
            return;
        }
        if (e instanceof ExecutionException && e.getCause() != null) {
            log.warn(what + ": " + Failures.describe(e.getCause()) + ThrottledLog.more(held), e.getCause());
        }
        else {
            log.warn(what + ": " + Failures.describe(e) + ThrottledLog.more(held));
        }
    }
}
