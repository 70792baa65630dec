package dev.waterline.hooks;

import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;

import io.micrometer.core.instrument.Counter;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The addresses of this host's own interfaces, which a hook may not call whatever their range (a
 * public address of this machine reaches every listener on it as well as loopback does). Read when
 * the guard is made and again, lazily, on the first check after {@link #REFRESH} has passed, since
 * addresses come and go (DHCP, a new container network); a check meanwhile uses the last list, so
 * an address added since is refused at most {@code REFRESH} late. One check reads while others go
 * on with the list they have. A read that fails keeps the last list, and is logged and counted.
 */
final class HostAddresses {

    /** How long a list of interface addresses is trusted. */
    static final Duration REFRESH = Duration.ofSeconds(30);

    private static final Log log = LogFactory.getLog(HostAddresses.class);

    /** Where the addresses come from: the interfaces, or a test's list. */
    @FunctionalInterface
    interface Source {
        Set<InetAddress> read() throws SocketException;
    }

    private record Snapshot(Set<InetAddress> addresses, Instant readAt) {
    }

    private final Source source;
    private final Clock clock;
    private final Counter failures;
    private final ReentrantLock reading = new ReentrantLock();
    private volatile Snapshot snapshot;

    HostAddresses(Source source, Clock clock, Counter failures) {
        this.source = source;
        this.clock = clock;
        this.failures = failures;
        this.snapshot = new Snapshot(Set.of(), Instant.MIN);
        refresh(clock.instant());
    }

    /** Every address of every interface of this host, up or down. */
    static HostAddresses ofInterfaces(Clock clock, Counter failures) {
        return new HostAddresses(HostAddresses::interfaces, clock, failures);
    }

    static Set<InetAddress> interfaces() throws SocketException {
        Set<InetAddress> all = new HashSet<>();
        for (NetworkInterface i : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            for (InetAddress a : Collections.list(i.getInetAddresses())) {
                all.add(withoutScope(a));
            }
        }
        return all;
    }

    /** Whether {@code a} is one of this host's addresses (an IPv6 zone does not matter). */
    boolean contains(InetAddress a) {
        Instant now = clock.instant();
        Snapshot s = snapshot;
        if (!now.isBefore(s.readAt().plus(REFRESH)) && reading.tryLock()) {
            try {
                refresh(now);
            }
            finally {
                reading.unlock();
            }
        }
        return snapshot.addresses().contains(withoutScope(a));
    }

    private void refresh(Instant now) {
        try {
            snapshot = new Snapshot(Set.copyOf(source.read()), now);
        }
        catch (SocketException | RuntimeException failed) {
            failures.increment();
            // the last list stays, and is tried again after REFRESH, not on every check
            snapshot = new Snapshot(snapshot.addresses(), now);
            log.warn("could not read this host's interface addresses (the SSRF guard keeps the "
                    + snapshot.addresses().size() + " it read before): " + failed);
        }
    }

    private static InetAddress withoutScope(InetAddress a) {
        try {
            return InetAddress.getByAddress(a.getAddress());
        }
        catch (UnknownHostException impossible) {
            throw new IllegalStateException(impossible);
        }
    }
}
