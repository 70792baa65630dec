package dev.waterline.delivery;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.waterline.outbox.OutboxRow;
import dev.waterline.presence.Location;
import dev.waterline.presence.Presence;
import dev.waterline.session.ClientSession;
import dev.waterline.session.SessionRegistry;
import dev.waterline.watermark.MarkerStore;
import dev.waterline.watermark.WatermarkIndex;
import org.springframework.stereotype.Component;

/**
 * What the poller must know of the recipients of its claim before it judges their rows: which are
 * connected here, where the others are (Redis's word, sound only while the index is whole), and
 * the index's word on each row of a recipient connected somewhere.
 */
@Component
class Recipients {

    private final SessionRegistry sessions;
    private final LiveIndex watermark;
    private final Presence presence;

    Recipients(SessionRegistry sessions, LiveIndex watermark, Presence presence) {
        this.sessions = sessions;
        this.watermark = watermark;
        this.presence = presence;
    }

    /** This node's connection of {@code user}, or null. */
    ClientSession here(String user) {
        return sessions.get(user);
    }

    /**
     * Where the users not connected here are ({@link Presence#locateIfWhole}). In the cluster
     * "connected nowhere" is Redis's word, read with the same checks as the status of a row; a user Redis places on this node without a
     * connection here is forgotten now (see {@link LiveIndex#forgetGhost}).
     */
    RowJudge.Located locate(Collection<String> users, MarkerStore.Marker marker) {
        List<String> notHere = new ArrayList<>();
        for (String user : users) {
            if (sessions.get(user) == null) {
                notHere.add(user);
            }
        }
        Optional<Map<String, Location>> located = notHere.isEmpty() ? Optional.of(Map.of()) : presence.locateIfWhole(notHere, marker);
        RowJudge.Located where = RowJudge.Located.of(located, presence.nodeId());
        where.ghosts().forEach(watermark::forgetGhost);
        return where;
    }

    /** The index's word on each of the rows of a recipient connected here or elsewhere (see {@link RowJudge#judge}). */
    WatermarkIndex.Statuses status(String user, RowJudge.Place place, MarkerStore.Marker marker, List<OutboxRow> rows) {
        return switch (place) {
            case RowJudge.Place.Here h -> watermark.status(user, h.session().sessionId(), true, marker, RowJudge.ids(rows));
            case RowJudge.Place.Elsewhere e -> watermark.status(user, e.location().sessionId(), false, marker, RowJudge.ids(rows));
            case RowJudge.Place.Nowhere n -> new WatermarkIndex.Statuses.Unknown();
            case RowJudge.Place.Unknown u -> new WatermarkIndex.Statuses.Unknown();
        };
    }
}
