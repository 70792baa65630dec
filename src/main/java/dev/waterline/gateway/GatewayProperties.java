package dev.waterline.gateway;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * {@code waterline.gateway.*}.
 *
 * @param maxFrameBytes a larger frame closes the connection with 1009. Default 64 KiB.
 * @param maxBodyChars a longer {@code send} body gets {@code too_large}. Default 4000.
 * @param maxInflightSends sends per connection that may await their answer; more get {@code rate_limited}. Default 256.
 * @param maxSendsPerSecond sustained sends per connection per second (bursts up to the same number);
 *                          more get {@code rate_limited}. Default 200.
 * @param sendTimeLimit longest one write may be in flight before the client is withdrawn (4008). Default 10 s.
 * @param sendBufferLimit outbound characters queued for a client (counted as UTF-16 code units, the
 *                        unit written as a size: {@code 1MB} is 1,048,576 characters) before it is
 *                        withdrawn (4008). Default 1 MiB.
 * @param maxConnectionsPerAddress open connections (WebSocket and HTTP) one remote address may
 *                                 hold; more are closed as they are accepted. Default 1000; 0
 *                                 turns the cap off. Behind a proxy every connection comes from
 *                                 the proxy's address: raise it or turn it off there.
 * @param closeTimeout how long, at shutdown, the connections' writers may take (all together) to
 *                     write what is queued for them before each is closed with 1001. Default 5 s.
 * @param headDeadline how long a connection may take, in all, to deliver a request's head (request
 *                     line and headers) from its accept or from the end of its previous response;
 *                     past it the connection is closed, however often bytes trickle in. Default 10 s.
 * @param heapPerConnection what one open connection is budgeted to hold in the heap (measured: ~36 KB
 *                          for one waiting for its request head, ~30 KB for an idle WebSocket).
 *                          Default 40 KB.
 * @param connectionHeapShare the share of the maximum heap that open connections may take together:
 *                            {@code max-connections} is lowered to this share divided by
 *                            {@code heap-per-connection} (and below the open-file limit). Default 0.5.
 * @param outboundHeapShare the share of the maximum heap that frames queued for clients may take
 *                          together (counted at two bytes a character); past it, a connection that
 *                          has more than 16,384 characters waiting is withdrawn (4008) when more is
 *                          queued for it. Default 0.25.
 */
@ConfigurationProperties("waterline.gateway")
public record GatewayProperties(
        @DefaultValue("64KB") DataSize maxFrameBytes,
        @DefaultValue("4000") int maxBodyChars,
        @DefaultValue("256") int maxInflightSends,
        @DefaultValue("200") int maxSendsPerSecond,
        @DefaultValue("10s") Duration sendTimeLimit,
        @DefaultValue("1MB") DataSize sendBufferLimit,
        @DefaultValue("1000") int maxConnectionsPerAddress,
        @DefaultValue("5s") Duration closeTimeout,
        @DefaultValue("10s") Duration headDeadline,
        @DefaultValue("40KB") DataSize heapPerConnection,
        @DefaultValue("0.5") double connectionHeapShare,
        @DefaultValue("0.25") double outboundHeapShare) {

    public GatewayProperties {
        if (heapPerConnection.toBytes() < 1 || !(connectionHeapShare > 0 && connectionHeapShare <= 1)
                || !(outboundHeapShare > 0 && outboundHeapShare <= 1)) {
            throw new IllegalArgumentException("waterline.gateway.heap-per-connection must be positive and"
                    + " connection-heap-share and outbound-heap-share from 0 (excluded) to 1");
        }
        if (sendTimeLimit.compareTo(Duration.ofSeconds(1)) < 0 || sendBufferLimit.toBytes() < 1) {
            throw new IllegalArgumentException(
                    "waterline.gateway.send-time-limit must be at least 1 s (the watchdog looks every second) and send-buffer-limit positive");
        }
    }
}
