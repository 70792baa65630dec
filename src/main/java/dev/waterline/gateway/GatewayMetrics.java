package dev.waterline.gateway;

import java.util.function.Supplier;

import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.session.SessionRegistry;
import io.micrometer.core.instrument.Counter;
import org.springframework.stereotype.Component;

/**
 * The gateway's series, every one registered at start (so that a counter shows zero before its
 * first event): open connections, connections refused and heads timed out at the connector,
 * sends refused at the input gate, writes and closes that failed, transport errors, and the
 * watermark index failing at a connect or a disconnect.
 */
@Component
class GatewayMetrics {

    private final WaterlineMetrics metrics;
    private final Counter writeFailures;
    private final Counter closeFailures;
    private final Counter transportErrors;
    private final Counter invalidSends;
    private final Counter indexFailuresAtConnect;
    private final Counter indexFailuresAtDisconnect;

    GatewayMetrics(WaterlineMetrics metrics, SessionRegistry sessions) {
        this.metrics = metrics;
        metrics.gauge("waterline.connections.active", "open WebSocket sessions", sessions::size);
        this.writeFailures = metrics.counter("waterline.gateway.write.failures",
                "connections withdrawn because writing to them failed: a socket error (1011), or a client that does"
                        + " not read (4008: its queue past the send buffer, or a write in flight past the send time)");
        metrics.functionCounter("waterline.gateway.connections.refused",
                "connections closed as accepted: their address held max-connections-per-address already",
                GuardedProtocol::refusedTotal);
        metrics.functionCounter("waterline.gateway.heads.timed.out",
                "connections closed because their request head (line and headers) did not arrive whole within waterline.gateway.head-deadline",
                GuardedProtocol::headsTimedOutTotal);
        this.transportErrors = metrics.counter("waterline.gateway.transport.errors",
                "WebSocket transport errors reported by the container (a client vanished mid-frame, a reset)");
        this.closeFailures = metrics.counter("waterline.gateway.close.failures",
                "closes that found their socket already closed or broken (the container then reports the connection closed)");
        String index = "the watermark index (Redis) failing at a connection's connect or disconnect: the index is"
                + " distrusted and rebuilt; in the cluster a connect it fails is closed with 1011";
        this.indexFailuresAtConnect = metrics.counter("waterline.gateway.index.failures", index, "at", "connect");
        this.indexFailuresAtDisconnect = metrics.counter("waterline.gateway.index.failures", index, "at", "disconnect");
        this.invalidSends = metrics.rejected("invalid");
    }

    /** The characters queued for clients, all connections together (registered once the gateway holds its budget). */
    void outboundQueued(Supplier<Number> chars) {
        metrics.gauge("waterline.gateway.outbound.queued.chars", "characters queued for clients, all connections together",
                chars);
    }

    Counter writeFailures() {
        return writeFailures;
    }

    Counter closeFailures() {
        return closeFailures;
    }

    Counter transportErrors() {
        return transportErrors;
    }

    /** A {@code send} refused at the input gate ({@code waterline_sends_rejected_total{reason="invalid"}}). */
    Counter invalidSends() {
        return invalidSends;
    }

    Counter indexFailuresAtConnect() {
        return indexFailuresAtConnect;
    }

    Counter indexFailuresAtDisconnect() {
        return indexFailuresAtDisconnect;
    }
}
