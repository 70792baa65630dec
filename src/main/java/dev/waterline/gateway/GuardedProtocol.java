package dev.waterline.gateway;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import jakarta.servlet.ServletConnection;
import org.apache.coyote.http11.Http11NioProtocol;
import org.apache.juli.logging.Log;
import org.apache.juli.logging.LogFactory;
import org.apache.tomcat.util.ExceptionUtils;
import org.apache.tomcat.util.net.NioChannel;
import org.apache.tomcat.util.net.NioEndpoint;
import org.apache.tomcat.util.net.SocketBufferHandler;

/**
 * Tomcat's NIO connector with two guards that act before a connection costs the server anything
 * but its descriptor and its few kilobytes of Tomcat's objects:
 *
 * <ul>
 * <li><b>A cap per remote address</b> ({@code waterline.gateway.max-connections-per-address}),
 * applied when a connection is accepted: without it one address opening idle sockets fills
 * {@code max-connections}, and then nobody else (health checks included) gets in. A connection
 * over the cap is closed at once and counted ({@code waterline_gateway_connections_refused_total}).
 * 0 turns the cap off. IPv6 peers count by their /64. Connections are tracked per address by their
 * channel; closed ones are dropped lazily (when an address reaches the cap, and in a sweep at most
 * every 10 s), so a client that closes and reconnects is never refused for its own closed sockets.
 * Only the connector's single acceptor thread admits; the tracking is per-key atomic anyway.</li>
 * <li><b>A total deadline for each request head</b> ({@code waterline.gateway.head-deadline}): a
 * connection must deliver a whole request line and headers within that long of being accepted, or
 * of the end of its previous response on a kept-alive connection. Tomcat's own timeout
 * ({@code server.tomcat.connection-timeout}) is per read, so a client trickling one header byte
 * every few seconds held its connection (and the ~36 KB of parser state behind it) for ever: 15,500
 * of them filled a 512 MB heap. The deadline rides on Tomcat's own timeout check: while a head is
 * awaited, the connection's last read is reported to Tomcat's timeout check as no later than the
 * deadline less the read timeout ({@link HeadTimedWrapper#getLastRead}), so the poller's usual scan
 * (every second) closes a silent connection there; and every read checks the deadline first, so a
 * trickling one (which the scan may never find waiting) fails its next read past it. {@link HeadDeadlineValve} tells the connection when its head is complete (the request
 * reached the container) and when the next one is awaited; a WebSocket upgrade or an asynchronous
 * response ends the deadline for good (an upgraded connection's idleness is the idle reaper's).</li>
 * </ul>
 */
public class GuardedProtocol extends Http11NioProtocol {

    private static final AtomicLong REFUSED = new AtomicLong();
    private static final AtomicLong HEADS_TIMED_OUT = new AtomicLong();

    /** Connections refused over the cap by every such connector in this JVM. */
    static long refusedTotal() {
        return REFUSED.get();
    }

    /** Connections closed because a request head did not complete within its deadline, in this JVM. */
    static long headsTimedOutTotal() {
        return HEADS_TIMED_OUT.get();
    }

    private final GuardedEndpoint endpoint;

    public GuardedProtocol() {
        this(new GuardedEndpoint());
    }

    private GuardedProtocol(GuardedEndpoint endpoint) {
        super(endpoint);
        this.endpoint = endpoint;
    }

    public void setMaxConnectionsPerAddress(int max) {
        endpoint.maxPerAddress = max;
    }

    public int getMaxConnectionsPerAddress() {
        return endpoint.maxPerAddress;
    }

    /** How long a request head may take in all, in ms; 0 or less: no deadline beyond Tomcat's per-read timeout. */
    public void setHeadDeadlineMillis(long millis) {
        endpoint.headDeadlineMillis = millis;
    }

    public long getHeadDeadlineMillis() {
        return endpoint.headDeadlineMillis;
    }

    static final class GuardedEndpoint extends NioEndpoint {

        private static final Log log = LogFactory.getLog(GuardedEndpoint.class);
        private static final long SWEEP_NANOS = TimeUnit.SECONDS.toNanos(10);

        private final ConcurrentHashMap<InetAddress, Set<SocketChannel>> open = new ConcurrentHashMap<>();
        private volatile int maxPerAddress;
        private volatile long headDeadlineMillis;
        private long lastSweep = System.nanoTime();

        /**
         * NioEndpoint's own, but for the wrapper it makes ({@link HeadTimedWrapper}) and the
         * address cap in front: Tomcat offers no other way to choose the wrapper's class. Kept
         * line for line with Tomcat 11's {@code NioEndpoint.setSocketOptions}.
         */
        @Override
        protected boolean setSocketOptions(SocketChannel socket) {
            if (!admit(socket)) {
                REFUSED.incrementAndGet();
                // Refused before a wrapper exists: the acceptor's closeSocket would find nothing
                // to close, so the socket is destroyed here (closed, connection count returned).
                destroySocket(socket);
                return false;
            }
            HeadTimedWrapper wrapper = null;
            try {
                NioChannel channel = getNioChannels() == null ? null : getNioChannels().pop();
                if (channel == null) {
                    SocketBufferHandler buffers = new SocketBufferHandler(socketProperties.getAppReadBufSize(),
                            socketProperties.getAppWriteBufSize(), socketProperties.getDirectBuffer());
                    channel = createChannel(buffers);
                }
                HeadTimedWrapper created = new HeadTimedWrapper(channel, this, headDeadlineMillis);
                channel.reset(socket, created);
                connections.put(socket, created);
                wrapper = created;
                socket.configureBlocking(false);
                if (getUnixDomainSocketPath() == null) {
                    socketProperties.setProperties(socket.socket());
                }
                created.setReadTimeout(getConnectionTimeout());
                created.setWriteTimeout(getConnectionTimeout());
                created.setKeepAliveLeft(getMaxKeepAliveRequests());
                getPoller().register(created);
                return true;
            }
            catch (Throwable t) {
                ExceptionUtils.handleThrowable(t);
                try {
                    log.error("a connection could not be set up (it is closed)", t);
                }
                catch (Throwable tt) {
                    // logging failed too (the heap is full): the socket is still destroyed below
                    ExceptionUtils.handleThrowable(tt);
                }
                if (wrapper == null) {
                    destroySocket(socket);
                }
            }
            return false;
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

    /**
     * A connection's wrapper that knows whether a request head is awaited and by when. While one
     * is, {@link #getLastRead} answers no later than the deadline less the read timeout, so that
     * the poller's check ({@code now - lastRead > readTimeout}) fires once the deadline has passed,
     * however often bytes trickle in. Tomcat 11 reads {@code lastRead} only in that check.
     */
    static final class HeadTimedWrapper extends NioEndpoint.NioSocketWrapper {

        private final long deadlineMillis;
        /** Epoch ms by which the awaited head must be complete; 0 while none is awaited (or never: an upgrade). */
        private volatile long headDueAt;
        /** Whether this head's passing of its deadline was counted (Tomcat's scan may ask again before it closes). */
        private volatile boolean counted;

        HeadTimedWrapper(NioChannel channel, NioEndpoint endpoint, long deadlineMillis) {
            super(channel, endpoint);
            this.deadlineMillis = deadlineMillis;
            this.headDueAt = deadlineMillis > 0 ? System.currentTimeMillis() + deadlineMillis : 0;
        }

        /** While a head is awaited, a read timeout of some length: the deadline works through it. */
        @Override
        public long getReadTimeout() {
            long base = super.getReadTimeout();
            return base <= 0 && headDueAt != 0 ? deadlineMillis : base;
        }

        /**
         * While a head is awaited, the last read as the poller's check ({@code now - lastRead >
         * readTimeout}) must see it for that check to fire at the deadline too: never later than
         * the deadline less the read timeout. So the check fires when the client has been silent
         * for the read timeout (Tomcat's own rule) or when the deadline has passed, whichever
         * comes first, even if a byte arrived a moment ago (a trickle's bytes and the poller's
         * scans fall into step: a rule on the time since the last byte alone never fired).
         */
        @Override
        public long getLastRead() {
            long real = super.getLastRead();
            long due = headDueAt;
            if (due == 0) {
                return real;
            }
            long now = System.currentTimeMillis();
            if (!counted && now > due && now - real <= getReadTimeout()) {
                // past the deadline with a byte read within the read timeout: a trickle, not a
                // silent connection (which Tomcat's own timeout would have closed as well)
                counted = true;
                HEADS_TIMED_OUT.incrementAndGet();
            }
            return Math.min(real, due - getReadTimeout());
        }

        /**
         * Reads check the deadline too: the poller's scan sees a connection only while it waits
         * for bytes, and a client that trickles them in step with the scan (a byte a second) is
         * never waiting when it looks. A read past the deadline fails as a timeout, which Tomcat
         * answers by closing the connection.
         */
        @Override
        public int read(boolean block, java.nio.ByteBuffer to) throws java.io.IOException {
            checkDeadline();
            return super.read(block, to);
        }

        @Override
        public int read(boolean block, byte[] b, int off, int len) throws java.io.IOException {
            checkDeadline();
            return super.read(block, b, off, len);
        }

        private void checkDeadline() throws java.net.SocketTimeoutException {
            long due = headDueAt;
            if (due != 0 && System.currentTimeMillis() > due) {
                if (!counted) {
                    counted = true;
                    HEADS_TIMED_OUT.incrementAndGet();
                }
                throw new java.net.SocketTimeoutException("the request head did not arrive whole within its deadline");
            }
        }

        /** The request's head is complete: body reads and the response are not held to the deadline. */
        void headComplete() {
            headDueAt = 0;
        }

        /** A response ended on a kept-alive connection: the next head is due within the deadline. */
        void nextHeadAwaited() {
            if (deadlineMillis > 0) {
                counted = false;
                headDueAt = System.currentTimeMillis() + deadlineMillis;
            }
        }

        /**
         * The servlet connection Tomcat would give, carrying this wrapper along, so that the valve,
         * which sees only the request, can reach its connection.
         */
        @Override
        public ServletConnection getServletConnection(String protocol, String protocolConnectionId) {
            ServletConnection tomcats = super.getServletConnection(protocol, protocolConnectionId);
            if (tomcats instanceof HeadTimedConnection mine) {
                return mine;
            }
            HeadTimedConnection mine = new HeadTimedConnection(tomcats, this);
            servletConnection = mine;
            return mine;
        }
    }

    /** Tomcat's {@link ServletConnection}, and the wrapper of the connection it describes. */
    record HeadTimedConnection(ServletConnection tomcats, HeadTimedWrapper wrapper) implements ServletConnection {

        @Override
        public String getConnectionId() {
            return tomcats.getConnectionId();
        }

        @Override
        public String getProtocol() {
            return tomcats.getProtocol();
        }

        @Override
        public String getProtocolConnectionId() {
            return tomcats.getProtocolConnectionId();
        }

        @Override
        public boolean isSecure() {
            return tomcats.isSecure();
        }
    }
}
