package dev.waterline.presence.local;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import dev.waterline.outbox.OutboxRow;
import dev.waterline.presence.Location;
import dev.waterline.presence.NodeBus;
import dev.waterline.session.ClientSession;
import dev.waterline.session.SessionRegistry;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.stereotype.Component;

/**
 * The single-node mode's bus: this node is the only one, so what is handed to a node arrives
 * here, a frame goes to the named connection here if it is still its user's current one, and a
 * close asked of another node gets a dead node's answer. {@code Presence} places nobody
 * elsewhere in this mode, so the delivery paths hand nothing over in practice.
 */
@Component
@ConditionalOnProperty(name = "waterline.cluster.enabled", havingValue = "false", matchIfMissing = true)
class LocalNodeBus implements NodeBus {

    private final SessionRegistry sessions;
    private volatile Deliveries deliveries = (rows, poller) -> { };
    private volatile java.util.function.Consumer<String> broadcasts = m -> { };

    LocalNodeBus(SessionRegistry sessions) {
        this.sessions = sessions;
    }

    /** No other node is alive to close it. */
    @Override
    public CompletableFuture<Boolean> close(Location where, int code, String reason) {
        return CompletableFuture.completedFuture(false);
    }

    @Override
    public void deliver(String node, List<OutboxRow> rows, boolean poller) {
        deliveries.arrived(rows, poller);
    }

    @Override
    public void send(Location where, String frame) {
        ClientSession s = sessions.get(where.userId());
        if (s != null && s.sessionId().equals(where.sessionId())) {
            s.send(frame);
        }
    }

    /** This node is every node. */
    @Override
    public void broadcast(String message) {
        broadcasts.accept(message);
    }

    @Override
    public void onBroadcast(java.util.function.Consumer<String> receiver) {
        this.broadcasts = receiver;
    }

    @Override
    public void onDeliveries(Deliveries deliveries) {
        this.deliveries = deliveries;
    }
}
