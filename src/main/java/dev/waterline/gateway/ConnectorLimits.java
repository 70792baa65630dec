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
 * The connector's limits, so that no client can take the process's last file descriptor: the
 * connector is {@link AddressCappedProtocol} (a cap per remote address), and its
 * {@code max-connections} is lowered, if need be, below the process's open-file limit with
 * room to spare ({@link #connectionsFor}) for the database pool, Redis, jars and logs. Past
 * {@code max-connections} Tomcat stops accepting (new connections wait in the kernel's accept
 * queue) instead of failing on {@code accept} with "Too many open files"; the header timeout
 * ({@code server.tomcat.connection-timeout}) closes a connection that sends no request.
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
            factory.setProtocol(AddressCappedProtocol.class.getName());
            factory.addConnectorCustomizers(connector -> {
                if (connector.getProtocolHandler() instanceof AddressCappedProtocol capped) {
                    capped.setMaxConnectionsPerAddress(gateway.maxConnectionsPerAddress());
                }
                if (connector.getProtocolHandler() instanceof AbstractProtocol<?> protocol) {
                    long files = fileLimit();
                    int bound = connectionsFor(files);
                    int configured = protocol.getMaxConnections();
                    if (configured < 0 || configured > bound) {
                        protocol.setMaxConnections(bound);
                        log.info("max-connections lowered from " + configured + " to " + bound
                                + " to stay below the process's open-file limit of " + files
                                + " (raise the limit, e.g. ulimit -n, to hold more connections)");
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
