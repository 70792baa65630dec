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
 * @param sendTimeLimit longest a single socket write may take before the connection is dropped. Default 10 s.
 * @param sendBufferLimit outbound bytes buffered for a slow reader before it is dropped. Default 1 MiB.
 * @param maxConnectionsPerAddress open connections (WebSocket and HTTP) one remote address may
 *                                 hold; more are closed as they are accepted. Default 1000; 0
 *                                 turns the cap off. Behind a proxy every connection comes from
 *                                 the proxy's address: raise it or turn it off there.
 */
@ConfigurationProperties("waterline.gateway")
public record GatewayProperties(
        @DefaultValue("64KB") DataSize maxFrameBytes,
        @DefaultValue("4000") int maxBodyChars,
        @DefaultValue("256") int maxInflightSends,
        @DefaultValue("200") int maxSendsPerSecond,
        @DefaultValue("10s") Duration sendTimeLimit,
        @DefaultValue("1MB") DataSize sendBufferLimit,
        @DefaultValue("1000") int maxConnectionsPerAddress) {
}
