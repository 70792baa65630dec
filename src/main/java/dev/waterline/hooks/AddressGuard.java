package dev.waterline.hooks;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import org.springframework.stereotype.Component;

/**
 * The SSRF guard (PROTOCOL.md §7): a hook may not make this server call an address a user should
 * not reach through it. Loopback, unspecified, private (RFC 1918, unique local), carrier-grade NAT
 * (where one cloud's metadata lives), link-local (169.254.169.254, every cloud's metadata),
 * multicast, broadcast and reserved addresses are refused, with IPv4 addresses embedded in IPv6
 * (mapped, compatible, NAT64, 6to4) judged as what they embed; unless the target's host name, or
 * the address, is in {@code waterline.hooks.allowed-hosts}.
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

    private final Set<String> allowedNames = new HashSet<>();
    private final Set<InetAddress> allowedAddresses = new HashSet<>();

    public AddressGuard(HookProperties properties) {
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
            if (why != null) {
                throw new Refused("the target " + host + " is " + (h.equals(a.getHostAddress()) ? "" : "at " + a.getHostAddress() + ", ")
                        + "a " + why + " address; hooks may not call it (waterline.hooks.allowed-hosts lists exceptions)");
            }
        }
        return all[0];
    }

    /** Why {@code a} may not be called, or null when it may. */
    static String forbidden(InetAddress a) {
        if (a instanceof Inet6Address v6) {
            byte[] b = v6.getAddress();
            Inet4Address embedded = embeddedV4(b);
            if (embedded != null) {
                return forbidden(embedded);
            }
            if (v6.isLoopbackAddress()) {
                return "loopback";
            }
            if (v6.isAnyLocalAddress()) {
                return "unspecified";
            }
            if (v6.isLinkLocalAddress()) {
                return "link-local";
            }
            if (v6.isSiteLocalAddress() || (b[0] & 0xfe) == 0xfc) {
                return "private";
            }
            if (v6.isMulticastAddress()) {
                return "multicast";
            }
            return null;
        }
        byte[] b = a.getAddress();
        int o0 = b[0] & 0xff, o1 = b[1] & 0xff, o2 = b[2] & 0xff;
        if (a.isLoopbackAddress()) {
            return "loopback";
        }
        if (o0 == 0) {
            return "unspecified";
        }
        if (a.isLinkLocalAddress()) {
            return "link-local";
        }
        if (a.isSiteLocalAddress()) {
            return "private";
        }
        if (o0 == 100 && (o1 & 0xc0) == 64) {
            return "carrier-grade NAT (private)";
        }
        if (o0 == 192 && o1 == 0 && o2 == 0) {
            return "reserved";
        }
        if (o0 == 198 && (o1 & 0xfe) == 18) {
            return "reserved";
        }
        if (a.isMulticastAddress()) {
            return "multicast";
        }
        if (o0 >= 240) {
            return o0 == 255 && o1 == 255 && o2 == 255 && (b[3] & 0xff) == 255 ? "broadcast" : "reserved";
        }
        return null;
    }

    /**
     * The IPv4 address inside an IPv4-mapped (::ffff:0:0/96, as a resolver may return it), SIIT
     * (::ffff:0:0:0/96), IPv4-compatible, NAT64 (64:ff9b::/96, and the local-use 64:ff9b:1::/48) or
     * 6to4 (2002::/16) IPv6 address.
     */
    private static Inet4Address embeddedV4(byte[] b) {
        boolean zeroPrefix = true;
        for (int i = 0; i < 12; i++) {
            zeroPrefix &= b[i] == 0;
        }
        boolean tenZero = true;
        for (int i = 0; i < 10; i++) {
            tenZero &= b[i] == 0;
        }
        boolean mapped = tenZero && (b[10] & 0xff) == 0xff && (b[11] & 0xff) == 0xff;
        boolean siit = true;
        for (int i = 0; i < 8; i++) {
            siit &= b[i] == 0;
        }
        siit &= (b[8] & 0xff) == 0xff && (b[9] & 0xff) == 0xff && b[10] == 0 && b[11] == 0;
        boolean localNat64 = (b[0] & 0xff) == 0x00 && (b[1] & 0xff) == 0x64 && (b[2] & 0xff) == 0xff && (b[3] & 0xff) == 0x9b
                && b[4] == 0 && (b[5] & 0xff) == 0x01;
        if (mapped || siit || localNat64) {
            try {
                return (Inet4Address) InetAddress.getByAddress(new byte[] {b[12], b[13], b[14], b[15]});
            }
            catch (UnknownHostException impossible) {
                throw new IllegalStateException(impossible);
            }
        }
        boolean nat64 = (b[0] & 0xff) == 0x00 && (b[1] & 0xff) == 0x64 && (b[2] & 0xff) == 0xff && (b[3] & 0xff) == 0x9b;
        for (int i = 4; nat64 && i < 12; i++) {
            nat64 = b[i] == 0;
        }
        try {
            if ((zeroPrefix && !(b[12] == 0 && b[13] == 0 && b[14] == 0 && (b[15] == 0 || b[15] == 1))) || nat64) {
                return (Inet4Address) InetAddress.getByAddress(new byte[] {b[12], b[13], b[14], b[15]});
            }
            if ((b[0] & 0xff) == 0x20 && (b[1] & 0xff) == 0x02) {
                return (Inet4Address) InetAddress.getByAddress(new byte[] {b[2], b[3], b[4], b[5]});
            }
        }
        catch (UnknownHostException impossible) {
            throw new IllegalStateException(impossible);
        }
        return null;
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
