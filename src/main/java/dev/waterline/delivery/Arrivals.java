package dev.waterline.delivery;

import dev.waterline.presence.NodeBus;
import org.springframework.stereotype.Component;

/**
 * Where rows handed over by other nodes go here: the fast path's (rows committed there for
 * clients connected here) to the fast path, the poller's (re-sends, and rows owed to a client
 * here, that a poller there claimed) to the poller's writers.
 */
@Component
class Arrivals {

    Arrivals(NodeBus bus, FastPath fastPath, OutboxPoller poller) {
        bus.onDeliveries((rows, fromPoller) -> {
            if (fromPoller) {
                poller.arrived(rows);
            }
            else {
                fastPath.arrived(rows);
            }
        });
    }
}
