package dev.waterline.attachments;

import java.util.HashMap;
import java.util.Map;

import dev.waterline.metrics.WaterlineMetrics;
import io.micrometer.core.instrument.Counter;
import org.springframework.stereotype.Component;

/** The series of attachments, registered at start so that zeros show. No label carries an id. */
@Component
class AttachmentMetrics {

    /** How an upload ended: stored, or the reason nothing was kept. */
    enum Upload { STORED, NOT_FOUND, TOO_LARGE, TOO_SLOW, BROKEN, STORE_FAILED }

    /** Why the sweep deleted an attachment. */
    enum Swept { ORPHAN, ABANDONED }

    private final Map<Upload, Counter> uploads = new HashMap<>();
    private final Map<Swept, Counter> swept = new HashMap<>();
    private final Counter dropsFailed;

    AttachmentMetrics(WaterlineMetrics metrics) {
        for (Upload u : Upload.values()) {
            uploads.put(u, metrics.counter("waterline.attachments.uploads", "attachment uploads answered, by outcome",
                    "outcome", u.name().toLowerCase(java.util.Locale.ROOT)));
        }
        for (Swept s : Swept.values()) {
            swept.put(s, metrics.counter("waterline.attachments.swept",
                    "attachments deleted by the sweep: never sent within orphan-ttl, or uploads never finished",
                    "outcome", s.name().toLowerCase(java.util.Locale.ROOT)));
        }
        dropsFailed = metrics.counter("waterline.attachments.upload.drops.failed",
                "failed attachment uploads whose row could not be dropped at once (the sweep drops it after the upload timeout)");
    }

    void upload(Upload outcome) {
        uploads.get(outcome).increment();
    }

    void swept(Swept why, int n) {
        swept.get(why).increment(n);
    }

    void dropFailed() {
        dropsFailed.increment();
    }
}
