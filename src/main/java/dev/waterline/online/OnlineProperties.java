package dev.waterline.online;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code waterline.presence.*} (PROTOCOL.md §10).
 *
 * @param enabled whether presence is followed and pushed at all (off: nobody is announced and no
 *                {@code presence} frame is sent; the query answers what was last announced). Default true.
 * @param debounce at most one announcement per user per debounce, and offline only once the user
 *                 has been gone for it (a reconnect inside it is no change). Default 10 s.
 * @param duePoll how often a node looks for users whose settle is due. Default 250 ms.
 * @param dueLease how long a node that took a due user has to settle it before another may. Default 5 s.
 * @param auditEvery how often a node checks a page of the users announced online against where they
 *                   are, and stamps as leaving those connected nowhere with no settle due (a backstop
 *                   for a leave no node stamped: a node that died between a close and its stamp).
 *                   Default 30 s.
 * @param keepLastSeen how long an offline user's last seen time is kept. Default 30 days.
 * @param linger how long the loop waits for more work before it does what it has. Default 50 ms.
 * @param batchSize most users settled, announcements fanned out, or users audited, in one pass. Default 200.
 * @param inboxSize announcements from the nodes waiting for this node's fan-out; past it one is dropped
 *                  (counted). Default 16384.
 * @param shedAtBacklogChars a recipient whose connection holds at least this many characters not yet
 *                           written gets no presence push (counted). Default 65536.
 */
@ConfigurationProperties("waterline.presence")
public record OnlineProperties(
        @DefaultValue("true") boolean enabled,
        @DefaultValue("10s") Duration debounce,
        @DefaultValue("250ms") Duration duePoll,
        @DefaultValue("5s") Duration dueLease,
        @DefaultValue("30s") Duration auditEvery,
        @DefaultValue("30d") Duration keepLastSeen,
        @DefaultValue("50ms") Duration linger,
        @DefaultValue("200") int batchSize,
        @DefaultValue("16384") int inboxSize,
        @DefaultValue("65536") long shedAtBacklogChars) {
}
