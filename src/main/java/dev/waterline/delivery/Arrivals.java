package dev.waterline.delivery;

import dev.waterline.presence.Presence;
import org.springframework.stereotype.Component;

/**
 * Where rows handed over by other nodes go here: the fast path's (rows committed there for
 * clients connected here) to the fast path, the poller's (re-sends, and rows owed to a client
 * here, that a poller there claimed) to the poller's writers.
 */
@Component
class Arrivals {

    Arrivals(Presence presence, FastPath fastPath, OutboxPoller poller) {
        presence.onDeliveries((rows, fromPoller) -> {
            if (fromPoller) {
                poller.arrived(rows);
            }
            else {
                fastPath.arrived(rows);
            }
        });
    }
}
