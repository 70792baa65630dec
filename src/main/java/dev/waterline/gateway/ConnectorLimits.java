package dev.waterline.gateway;

import java.lang.management.ManagementFactory;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.coyote.AbstractProtocol;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;

/**
 * The connector's limits, so that nothing a client does to the port can take the process's last
 * file descriptor or its heap: the connector is {@link GuardedProtocol} (a cap per remote address,
 * a total deadline for each request head, told by {@link HeadDeadlineValve}), and its
 * {@code max-connections} is lowered, if need be, below both the process's open-file limit (with
 * room for the database pool, Redis, jars and logs) and the heap's share for connections
 * ({@link #connectionsFor}). Past {@code max-connections} Tomcat stops accepting (new connections
 * wait in the kernel's accept queue) instead of failing on {@code accept} with "Too many open
 * files" or running out of memory.
 */
@Configuration(proxyBeanMethods = false)
class ConnectorLimits {

    private static final Log log = LogFactory.getLog(ConnectorLimits.class);

    /** Descriptors kept for everything but client connections: a twentieth of the limit, 512 to 4096. */
    static int connectionsFor(long fileLimit) {
        if (fileLimit <= 0 || fileLimit > Integer.MAX_VALUE) {
            return Integer.MAX_VALUE;
        }
        long reserve = Math.max(512, Math.min(4096, fileLimit / 20));
        return (int) Math.max(64, fileLimit - reserve);
    }

    /** Connections the heap's share holds at {@code perConnection} bytes each (at least 64). */
    static int connectionsFor(long maxHeap, double share, long perConnection) {
        if (maxHeap <= 0 || maxHeap == Long.MAX_VALUE) {
            return Integer.MAX_VALUE;
        }
        return (int) Math.max(64, Math.min(Integer.MAX_VALUE, (long) (maxHeap * share) / perConnection));
    }

    /** What {@code max-connections} becomes, and which limit set it. */
    record Bound(int connections, String why) {
    }

    static Bound bound(long fileLimit, long maxHeap, GatewayProperties gateway) {
        int files = connectionsFor(fileLimit);
        int heap = connectionsFor(maxHeap, gateway.connectionHeapShare(), gateway.heapPerConnection().toBytes());
        return heap < files
                ? new Bound(heap, "to keep connections within " + Math.round(gateway.connectionHeapShare() * 100)
                        + " % of the " + (maxHeap >> 20) + " MB heap at " + gateway.heapPerConnection().toKilobytes()
                        + " KB each (waterline.gateway.connection-heap-share, heap-per-connection; a larger -Xmx holds more)")
                : new Bound(files, "to stay below the process's open-file limit of " + fileLimit
                        + " (raise the limit, e.g. ulimit -n, to hold more connections)");
    }

    /** The process's open-file limit, or -1 where the JVM cannot tell. */
    static long fileLimit() {
        return ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.UnixOperatingSystemMXBean unix
                ? unix.getMaxFileDescriptorCount() : -1;
    }

    @Bean
    static WebServerFactoryCustomizer<TomcatServletWebServerFactory> connectorLimitsCustomizer(GatewayProperties gateway) {
        return new Customizer(gateway);
    }

    /** Runs after Spring Boot's own customizer, so that it sees (and may lower) {@code server.tomcat.max-connections}. */
    private record Customizer(GatewayProperties gateway) implements WebServerFactoryCustomizer<TomcatServletWebServerFactory>, Ordered {

        @Override
        public void customize(TomcatServletWebServerFactory factory) {
            factory.setProtocol(GuardedProtocol.class.getName());
            factory.addEngineValves(new HeadDeadlineValve());
            factory.addConnectorCustomizers(connector -> {
                // No endpoint takes form bodies; Tomcat would otherwise read a form-typed POST's
                // body into parameters as soon as anything (the input gate) asks for one, before
                // its endpoint has checked who may send it, and a file uploaded with a form's type
                // would reach its endpoint already read (stored empty).
                connector.setParseBodyMethods("");
                if (connector.findUpgradeProtocols().length > 0) {
                    // an HTTP/2 connection's streams share one wrapper, which the head deadline
                    // (per HTTP/1.1 request head) would time out as a whole: not supported together
                    throw new IllegalStateException("HTTP/2 (server.http2.enabled) is not supported with the connector's head deadline:"
                            + " terminate HTTP/2 at a proxy in front");
                }
                if (connector.getProtocolHandler() instanceof GuardedProtocol guarded) {
                    guarded.setMaxConnectionsPerAddress(gateway.maxConnectionsPerAddress());
                    guarded.setHeadDeadlineMillis(gateway.headDeadline().toMillis());
                }
                if (connector.getProtocolHandler() instanceof AbstractProtocol<?> protocol) {
                    Bound bound = bound(fileLimit(), Runtime.getRuntime().maxMemory(), gateway);
                    int configured = protocol.getMaxConnections();
                    if (configured < 0 || configured > bound.connections()) {
                        protocol.setMaxConnections(bound.connections());
                        log.info("max-connections lowered from " + configured + " to " + bound.connections() + " " + bound.why());
                    }
                }
            });
        }

        @Override
        public int getOrder() {
            return Ordered.LOWEST_PRECEDENCE;
        }
    }
}
