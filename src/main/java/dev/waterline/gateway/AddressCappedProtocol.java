package dev.waterline.gateway;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.coyote.http11.Http11NioProtocol;
import org.apache.tomcat.util.net.NioEndpoint;

/**
 * Tomcat's NIO connector with a cap on the connections one remote address may hold open
 * ({@code waterline.gateway.max-connections-per-address}), applied when a connection is
 * accepted, before it costs anything but its descriptor: without it one address opening idle
 * sockets fills {@code max-connections}, and then nobody else (health checks included) gets in.
 * A connection over the cap is closed at once and counted
 * ({@code waterline_gateway_connections_refused_total}). 0 turns the cap off. IPv6 peers count
 * by their /64.
 *
 * <p>Connections are tracked per address by their channel; closed ones are dropped lazily (when
 * an address reaches the cap, and in a sweep at most every 10 s), so a client that closes and
 * reconnects is never refused for its own closed sockets. Only the connector's single acceptor
 * thread admits; the tracking is per-key atomic anyway.
 */
public class AddressCappedProtocol extends Http11NioProtocol {

    private static final AtomicLong REFUSED = new AtomicLong();

    /** Connections refused over the cap by every such connector in this JVM. */
    static long refusedTotal() {
        return REFUSED.get();
    }

    private final CappedEndpoint endpoint;

    public AddressCappedProtocol() {
        this(new CappedEndpoint());
    }

    private AddressCappedProtocol(CappedEndpoint endpoint) {
        super(endpoint);
        this.endpoint = endpoint;
    }

    public void setMaxConnectionsPerAddress(int max) {
        endpoint.maxPerAddress = max;
    }

    public int getMaxConnectionsPerAddress() {
        return endpoint.maxPerAddress;
    }

    static final class CappedEndpoint extends NioEndpoint {

        private static final long SWEEP_NANOS = TimeUnit.SECONDS.toNanos(10);

        private final ConcurrentHashMap<InetAddress, Set<SocketChannel>> open = new ConcurrentHashMap<>();
        private volatile int maxPerAddress;
        private long lastSweep = System.nanoTime();

        @Override
        protected boolean setSocketOptions(SocketChannel socket) {
            if (!admit(socket)) {
                REFUSED.incrementAndGet();
                // Refused before a wrapper exists: the acceptor's closeSocket would find nothing
                // to close, so the socket is destroyed here (closed, connection count returned).
                destroySocket(socket);
                return false;
            }
            return super.setSocketOptions(socket);
        }

        boolean admit(SocketChannel socket) {
            int max = maxPerAddress;
            if (max <= 0) {
                return true;
            }
            long now = System.nanoTime();
            if (now - lastSweep > SWEEP_NANOS) {
                lastSweep = now;
                for (InetAddress a : open.keySet()) {
                    open.computeIfPresent(a, (k, set) -> {
                        set.removeIf(c -> !c.isOpen());
                        return set.isEmpty() ? null : set;
                    });
                }
            }
            InetAddress address = remote(socket);
            if (address == null) {
                return true;
            }
            boolean[] admitted = {true};
            open.compute(address, (k, set) -> {
                Set<SocketChannel> s = set != null ? set : ConcurrentHashMap.newKeySet();
                if (s.size() >= max) {
                    s.removeIf(c -> !c.isOpen());
                }
                if (s.size() >= max) {
                    admitted[0] = false;
                }
                else {
                    s.add(socket);
                }
                return s.isEmpty() ? null : s;
            });
            return admitted[0];
        }

        /**
         * The key a connection counts against: its IPv4 address, or the /64 network of its IPv6
         * address (one host is handed a whole /64 and could otherwise take a fresh address for
         * every connection). Null when the channel no longer knows its peer (it is gone already).
         */
        private static InetAddress remote(SocketChannel socket) {
            try {
                if (!(socket.getRemoteAddress() instanceof InetSocketAddress a)) {
                    return null;
                }
                InetAddress address = a.getAddress();
                if (address instanceof java.net.Inet6Address) {
                    byte[] network = java.util.Arrays.copyOf(address.getAddress(), 16);
                    java.util.Arrays.fill(network, 8, 16, (byte) 0);
                    return InetAddress.getByAddress(network);
                }
                return address;
            }
            catch (IOException e) {
                // the socket closed as it was accepted: no address to count, and Tomcat drops it
                return null;
            }
        }
    }
}
