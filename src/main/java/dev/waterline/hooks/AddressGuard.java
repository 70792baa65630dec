package dev.waterline.hooks;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Clock;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import dev.waterline.metrics.WaterlineMetrics;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;

/**
 * The SSRF guard (PROTOCOL.md §7): a hook may not make this server call an address a user should
 * not reach through it. Refused: every range of IANA's IPv4 and IPv6 Special-Purpose Address
 * Registries (loopback, private, carrier-grade NAT, link-local where every cloud keeps its metadata,
 * documentation, benchmarking, the IETF's protocol assignments, …), multicast, and every IPv6 block
 * that is not global unicast ({@link #V4}, {@link #V6}); and every address of this host's own
 * interfaces, public ones included ({@link HostAddresses}), which a hook would otherwise reach on
 * whatever listens there. An IPv4-mapped or NAT64 address is judged as the IPv4 address it
 * embeds. All this unless the target's host name, or the address, is in
 * {@code waterline.hooks.allowed-hosts}.
 *
 * <p>Checked when a hook is created and again before every call, after DNS resolution, on every
 * address the name resolves to; the sinks then connect to the address that was checked (never to
 * the name again), so a name that resolves to a public address at the check and to loopback a
 * moment later (DNS rebinding) cannot slip between the two.
 */
@Component
public class AddressGuard {

    /** A target refused: its address is not one a hook may call. */
    public static final class Refused extends Exception {
        public Refused(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * A prefix of one address family and why addresses in it are refused, parsed once from its
     * text. (Two of them are equal only if they are the same: nothing compares them.)
     */
    record Cidr(byte[] network, int bits, String reason) {

        static Cidr of(String cidr, String reason) {
            int slash = cidr.indexOf('/');
            byte[] network;
            try {
                network = InetAddress.getByName(cidr.substring(0, slash)).getAddress();
            }
            catch (UnknownHostException notALiteral) {
                throw new IllegalArgumentException("not an address prefix: " + cidr, notALiteral);
            }
            int bits = Integer.parseInt(cidr.substring(slash + 1));
            boolean v6 = cidr.contains(":");
            if (network.length != (v6 ? 16 : 4) || bits < 0 || bits > network.length * 8) {
                throw new IllegalArgumentException("not an address prefix: " + cidr);
            }
            for (int i = bits; i < network.length * 8; i++) {
                if ((network[i / 8] & (0x80 >>> (i % 8))) != 0) {
                    // a typo in the table, which would otherwise match nothing
                    throw new IllegalArgumentException("host bits set in " + cidr);
                }
            }
            return new Cidr(network, bits, reason);
        }

        boolean contains(byte[] address) {
            if (address.length != network.length) {
                return false;
            }
            int whole = bits / 8;
            for (int i = 0; i < whole; i++) {
                if (address[i] != network[i]) {
                    return false;
                }
            }
            int rest = bits % 8;
            return rest == 0 || ((address[whole] ^ network[whole]) & (0xff << (8 - rest)) & 0xff) == 0;
        }
    }

    /**
     * IANA's IPv4 Special-Purpose Address Registry (as of 2025), every entry whatever its
     * "globally reachable" column (no hook has business with an AS112 or AMT relay), plus
     * multicast (its own registry). The most specific prefix names the reason.
     */
    static final List<Cidr> V4 = List.of(
            Cidr.of("0.0.0.0/8", "unspecified (\"this network\")"),
            Cidr.of("10.0.0.0/8", "private"),
            Cidr.of("100.64.0.0/10", "carrier-grade NAT (private)"),
            Cidr.of("127.0.0.0/8", "loopback"),
            Cidr.of("169.254.0.0/16", "link-local"),
            Cidr.of("172.16.0.0/12", "private"),
            Cidr.of("192.0.0.0/24", "IETF protocol assignment"),
            Cidr.of("192.0.0.0/29", "IPv4 service continuity (DS-Lite)"),
            Cidr.of("192.0.0.8/32", "IPv4 dummy"),
            Cidr.of("192.0.0.9/32", "PCP anycast"),
            Cidr.of("192.0.0.10/32", "TURN anycast"),
            Cidr.of("192.0.0.170/32", "NAT64/DNS64 discovery"),
            Cidr.of("192.0.0.171/32", "NAT64/DNS64 discovery"),
            Cidr.of("192.0.2.0/24", "documentation (TEST-NET-1)"),
            Cidr.of("192.31.196.0/24", "AS112"),
            Cidr.of("192.52.193.0/24", "AMT"),
            Cidr.of("192.88.99.0/24", "6to4 relay anycast (deprecated)"),
            Cidr.of("192.168.0.0/16", "private"),
            Cidr.of("192.175.48.0/24", "AS112 direct delegation"),
            Cidr.of("198.18.0.0/15", "benchmarking"),
            Cidr.of("198.51.100.0/24", "documentation (TEST-NET-2)"),
            Cidr.of("203.0.113.0/24", "documentation (TEST-NET-3)"),
            Cidr.of("224.0.0.0/4", "multicast"),
            Cidr.of("240.0.0.0/4", "reserved"),
            Cidr.of("255.255.255.255/32", "broadcast"));

    /**
     * IANA's IPv6 Special-Purpose Address Registry (as of 2025), fec0::/10 (deprecated site-local)
     * and multicast, and every block of the IPv6 Address Space registry that is not global unicast
     * (2000::/3): they are reserved, and nothing a hook should call lives there. The IPv4-mapped
     * (::ffff:0:0/96) and NAT64 (64:ff9b::/96) prefixes are not rows: an address in them is the
     * IPv4 address it embeds by another name (a DNS64 resolver hands out the latter for every
     * IPv4-only host), judged as that ({@link #forbidden}).
     */
    static final List<Cidr> V6 = List.of(
            Cidr.of("::/128", "unspecified"),
            Cidr.of("::1/128", "loopback"),
            Cidr.of("64:ff9b:1::/48", "local-use IPv4/IPv6 translation"),
            Cidr.of("100::/64", "discard-only"),
            Cidr.of("100:0:0:1::/64", "dummy IPv6 prefix"),
            Cidr.of("2001::/23", "IETF protocol assignment"),
            Cidr.of("2001::/32", "Teredo"),
            Cidr.of("2001:1::1/128", "PCP anycast"),
            Cidr.of("2001:1::2/128", "TURN anycast"),
            Cidr.of("2001:1::3/128", "DNS-SD service registration anycast"),
            Cidr.of("2001:2::/48", "benchmarking"),
            Cidr.of("2001:3::/32", "AMT"),
            Cidr.of("2001:4:112::/48", "AS112"),
            Cidr.of("2001:10::/28", "ORCHID (deprecated)"),
            Cidr.of("2001:20::/28", "ORCHIDv2"),
            Cidr.of("2001:30::/28", "drone remote ID (DET)"),
            Cidr.of("2001:db8::/32", "documentation"),
            Cidr.of("2002::/16", "6to4"),
            Cidr.of("2620:4f:8000::/48", "AS112 direct delegation"),
            Cidr.of("3fff::/20", "documentation"),
            Cidr.of("5f00::/16", "SRv6 SID"),
            Cidr.of("fc00::/7", "unique-local (private)"),
            Cidr.of("fe80::/10", "link-local"),
            Cidr.of("fec0::/10", "site-local (private, deprecated)"),
            Cidr.of("ff00::/8", "multicast"),
            // the IPv6 Address Space registry: all but 2000::/3 is reserved by the IETF (or one of
            // the rows above); ::/8 holds the IPv4-compatible and IPv4-translated (SIIT) forms
            Cidr.of("::/8", "reserved (not global unicast)"),
            Cidr.of("100::/8", "reserved (not global unicast)"),
            Cidr.of("200::/7", "reserved (not global unicast)"),
            Cidr.of("400::/6", "reserved (not global unicast)"),
            Cidr.of("800::/5", "reserved (not global unicast)"),
            Cidr.of("1000::/4", "reserved (not global unicast)"),
            Cidr.of("4000::/2", "reserved (not global unicast)"),
            Cidr.of("8000::/2", "reserved (not global unicast)"),
            Cidr.of("c000::/3", "reserved (not global unicast)"),
            Cidr.of("e000::/4", "reserved (not global unicast)"),
            Cidr.of("f000::/5", "reserved (not global unicast)"),
            Cidr.of("f800::/6", "reserved (not global unicast)"),
            Cidr.of("fe00::/9", "reserved (not global unicast)"));

    static final String OWN = "this host's own";

    private final Set<String> allowedNames = new HashSet<>();
    private final Set<InetAddress> allowedAddresses = new HashSet<>();
    private final HostAddresses own;

    @Autowired
    public AddressGuard(HookProperties properties, Clock clock, WaterlineMetrics metrics) {
        this(properties, HostAddresses.ofInterfaces(clock, metrics.counter("waterline.hook.guard.interfaces.failed",
                "times this host's interface addresses could not be read again (the guard kept the last list it read)")));
    }

    AddressGuard(HookProperties properties, HostAddresses own) {
        this.own = own;
        for (String host : properties.allowedHosts()) {
            String h = unbracket(host).toLowerCase(Locale.ROOT);
            allowedNames.add(h);
            if (looksLiteral(h)) {
                try {
                    allowedAddresses.add(InetAddress.getByName(h));
                }
                catch (UnknownHostException e) {
                    throw new IllegalArgumentException("waterline.hooks.allowed-hosts: not an address: " + host, e);
                }
            }
        }
    }

    /**
     * Resolves {@code host} and checks every address it has; returns the one to connect to.
     *
     * @throws Refused when an address is one a hook may not call
     * @throws UnknownHostException when the name does not resolve (a retryable failure at call time)
     */
    public InetAddress check(String host) throws Refused, UnknownHostException {
        String h = unbracket(host).toLowerCase(Locale.ROOT);
        if (h.isEmpty()) {
            throw new Refused("the target names no host");
        }
        // a literal is parsed, never looked up; a name is resolved once, here
        InetAddress[] all = InetAddress.getAllByName(h);
        if (allowedNames.contains(h)) {
            return all[0];
        }
        for (InetAddress a : all) {
            if (allowedAddresses.contains(a)) {
                continue;
            }
            String why = forbidden(a);
            if (why == null && ownAddress(a)) {
                why = OWN;
            }
            if (why != null) {
                throw new Refused("hooks may not call " + host + (h.equals(a.getHostAddress()) ? "" : " (at " + a.getHostAddress() + ")")
                        + ": " + why + " address (waterline.hooks.allowed-hosts lists exceptions)");
            }
        }
        return all[0];
    }

    /**
     * Why {@code a} may not be called, whoever's host it is, or null when it may: the reason of the
     * most specific prefix of {@link #V4} or {@link #V6} it is in. An IPv4-mapped or NAT64 address
     * is judged as the IPv4 address it embeds ({@link #sameAsV4}); every other IPv6 form that
     * embeds one (6to4, local-use NAT64, IPv4-compatible, SIIT) is in a refused block whatever it
     * embeds.
     */
    static String forbidden(InetAddress a) {
        byte[] b = a.getAddress();
        if (a instanceof Inet6Address) {
            Inet4Address same = sameAsV4(b);
            return same != null ? forbidden(same) : mostSpecific(V6, b);
        }
        return mostSpecific(V4, b);
    }

    private static String mostSpecific(List<Cidr> table, byte[] address) {
        Cidr found = null;
        for (Cidr c : table) {
            if (c.contains(address) && (found == null || c.bits() > found.bits())) {
                found = c;
            }
        }
        return found == null ? null : found.reason();
    }

    /**
     * The IPv4 address an IPv4-mapped (::ffff:0:0/96, as a resolver may return it) or NAT64
     * (64:ff9b::/96) IPv6 address stands for, or null for any other: a call to either reaches that
     * IPv4 address (through the kernel, or through the network's translator).
     */
    static Inet4Address sameAsV4(byte[] b) {
        boolean mapped = (b[10] & 0xff) == 0xff && (b[11] & 0xff) == 0xff;
        for (int i = 0; mapped && i < 10; i++) {
            mapped = b[i] == 0;
        }
        boolean nat64 = b[0] == 0 && b[1] == 0x64 && (b[2] & 0xff) == 0xff && (b[3] & 0xff) == 0x9b;
        for (int i = 4; nat64 && i < 12; i++) {
            nat64 = b[i] == 0;
        }
        if (!mapped && !nat64) {
            return null;
        }
        try {
            return (Inet4Address) InetAddress.getByAddress(new byte[] {b[12], b[13], b[14], b[15]});
        }
        catch (UnknownHostException impossible) {
            throw new IllegalStateException(impossible);
        }
    }

    /** Whether {@code a} (or the IPv4 address it stands for) is one of this host's own. */
    private boolean ownAddress(InetAddress a) {
        Inet4Address same = a instanceof Inet6Address ? sameAsV4(a.getAddress()) : null;
        return own.contains(a) || (same != null && own.contains(same));
    }

    /** A URI host without the brackets of an IPv6 literal. */
    public static String unbracketed(String host) {
        return unbracket(host);
    }

    static String unbracket(String host) {
        return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    }

    private static boolean looksLiteral(String h) {
        return h.contains(":") || h.chars().allMatch(c -> c == '.' || Character.isDigit(c));
    }

    /** The address in the form a URI's authority takes (IPv6 in brackets). */
    public static String uriHost(InetAddress a) {
        return a instanceof Inet6Address ? "[" + a.getHostAddress() + "]" : a.getHostAddress();
    }

    /** Every host of a {@code host:port,host:port} list, as written. */
    public static List<String> hostsOf(String servers) {
        return java.util.Arrays.stream(servers.split(",")).map(String::strip).filter(s -> !s.isEmpty())
                .map(s -> s.startsWith("[") ? s.substring(0, s.indexOf(']') + 1) : s.contains(":") ? s.substring(0, s.lastIndexOf(':')) : s)
                .toList();
    }
}
