package dev.waterline.hooks;

import java.net.InetAddress;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The SSRF guard's judgement of addresses, on literals (nothing is looked up). */
class AddressGuardUnitTests {

    static HookProperties allowing(String... hosts) {
        return new HookProperties(true, 4, 32, Duration.ofMillis(250), 256, 8, Duration.ofSeconds(10), Duration.ofSeconds(5),
                Duration.ofSeconds(60), Duration.ofSeconds(1), Duration.ofMinutes(10), 12, 5, Duration.ofSeconds(30),
                Duration.ofSeconds(5), List.of(hosts), 10, 0.2, Duration.ofSeconds(1), 0.5, 16, Duration.ofMinutes(1), 0.5, Duration.ofDays(14));
    }

    /** A clock the test moves. */
    static final class TestClock extends Clock {
        Instant now = Instant.parse("2026-01-01T00:00:00Z");

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    final Counter readFailures = new SimpleMeterRegistry().counter("failures");

    /** A guard allowing {@code allowed}, on a host with no addresses of its own (the ranges alone are judged). */
    AddressGuard guard(String... allowed) {
        return new AddressGuard(allowing(allowed), new HostAddresses(Set::of, Clock.systemUTC(), readFailures));
    }

    /** A guard on a host whose interfaces hold what {@code interfaces} holds when they are read (null: they cannot be read). */
    AddressGuard onHost(TestClock clock, AtomicReference<Set<InetAddress>> interfaces, String... allowed) {
        return new AddressGuard(allowing(allowed), new HostAddresses(() -> {
            Set<InetAddress> now = interfaces.get();
            if (now == null) {
                throw new java.net.SocketException("the interfaces cannot be read");
            }
            return now;
        }, clock, readFailures));
    }

    static InetAddress address(String literal) {
        try {
            return InetAddress.getByName(literal);
        }
        catch (java.net.UnknownHostException e) {
            throw new IllegalArgumentException(e);
        }
    }

    @Test
    void anAddressOfThisHostsOwnInterfacesIsRefusedEvenWhenItIsPublicAndAllowedHostsStillNamesExceptions() throws Exception {
        TestClock clock = new TestClock();
        AtomicReference<Set<InetAddress>> interfaces = new AtomicReference<>(Set.of(address("93.184.216.34"), address("2606:4700::1111")));
        AddressGuard guard = onHost(clock, interfaces);
        assertThatThrownBy(() -> guard.check("93.184.216.34")).isInstanceOf(AddressGuard.Refused.class)
                .hasMessageContaining("this host's own");
        assertThatThrownBy(() -> guard.check("[2606:4700::1111]")).isInstanceOf(AddressGuard.Refused.class)
                .hasMessageContaining("this host's own");
        byte[] mapped = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff, 93, (byte) 184, (byte) 216, 34};
        byte[] nat64 = {0, 0x64, (byte) 0xff, (byte) 0x9b, 0, 0, 0, 0, 0, 0, 0, 0, 93, (byte) 184, (byte) 216, 34};
        assertThatThrownBy(() -> guard.check(java.net.Inet6Address.getByAddress(null, mapped, -1).getHostAddress()))
                .as("the own IPv4 address, mapped").isInstanceOf(AddressGuard.Refused.class);
        assertThatThrownBy(() -> guard.check(java.net.Inet6Address.getByAddress(null, nat64, -1).getHostAddress()))
                .as("the own IPv4 address through NAT64").isInstanceOf(AddressGuard.Refused.class).hasMessageContaining("this host's own");
        assertThat(guard.check("93.184.216.35")).as("the neighbour is not this host").isEqualTo(address("93.184.216.35"));

        AddressGuard allowing = onHost(clock, interfaces, "93.184.216.34");
        assertThat(allowing.check("93.184.216.34")).isEqualTo(address("93.184.216.34"));
        assertThat(onHost(clock, interfaces, "192.0.2.2").check("192.0.2.2")).as("an allowed documentation address")
                .isEqualTo(address("192.0.2.2"));
    }

    @Test
    void theInterfaceListIsReadAgainLazilyOnceThirtySecondsHavePassedAndAFailedReadKeepsTheLastList() throws Exception {
        TestClock clock = new TestClock();
        AtomicReference<Set<InetAddress>> interfaces = new AtomicReference<>(Set.of(address("93.184.216.34")));
        AddressGuard guard = onHost(clock, interfaces);
        assertThatThrownBy(() -> guard.check("93.184.216.34")).isInstanceOf(AddressGuard.Refused.class);

        // the address moves to another host and this one gets a new one
        interfaces.set(Set.of(address("93.184.216.99")));
        clock.now = clock.now.plus(HostAddresses.REFRESH).minusMillis(1);
        assertThatThrownBy(() -> guard.check("93.184.216.34")).as("the list is trusted for REFRESH").isInstanceOf(AddressGuard.Refused.class);
        assertThat(guard.check("93.184.216.99")).as("not yet known").isEqualTo(address("93.184.216.99"));
        clock.now = clock.now.plusMillis(1);
        assertThat(guard.check("93.184.216.34")).as("read again: no longer this host's").isEqualTo(address("93.184.216.34"));
        assertThatThrownBy(() -> guard.check("93.184.216.99")).isInstanceOf(AddressGuard.Refused.class).hasMessageContaining("this host's own");

        interfaces.set(null);
        clock.now = clock.now.plus(HostAddresses.REFRESH);
        assertThatThrownBy(() -> guard.check("93.184.216.99")).as("a failed read keeps the last list")
                .isInstanceOf(AddressGuard.Refused.class);
        assertThat(readFailures.count()).isEqualTo(1);
        assertThatThrownBy(() -> guard.check("93.184.216.99")).isInstanceOf(AddressGuard.Refused.class);
        assertThat(readFailures.count()).as("tried again after REFRESH, not on every check").isEqualTo(1);
    }

    @Test
    void theRealInterfaceListHoldsLoopbackAndEveryAddressOfItIsRefused() throws Exception {
        Set<InetAddress> real = HostAddresses.interfaces();
        assertThat(real).contains(address("127.0.0.1"));
        AddressGuard guard = new AddressGuard(allowing(), HostAddresses.ofInterfaces(Clock.systemUTC(), readFailures));
        for (InetAddress a : real) {
            assertThatThrownBy(() -> guard.check(a.getHostAddress())).as(a.getHostAddress()).isInstanceOf(AddressGuard.Refused.class);
        }
    }

    /**
     * Each range of IANA's IPv4 Special-Purpose Address Registry (and multicast): its first and
     * last address, refused with its reason, and the addresses just outside it, which pass (where
     * they are not in another range themselves).
     */
    static final List<List<String>> V4_RANGES = List.of(
            List.of("0.0.0.0", "0.255.255.255", "unspecified", "", "1.0.0.0"),
            List.of("10.0.0.0", "10.255.255.255", "private", "9.255.255.255", "11.0.0.0"),
            List.of("100.64.0.0", "100.127.255.255", "carrier-grade NAT", "100.63.255.255", "100.128.0.0"),
            List.of("127.0.0.0", "127.255.255.255", "loopback", "126.255.255.255", "128.0.0.0"),
            List.of("169.254.0.0", "169.254.255.255", "link-local", "169.253.255.255", "169.255.0.0"),
            List.of("172.16.0.0", "172.31.255.255", "private", "172.15.255.255", "172.32.0.0"),
            List.of("192.0.0.11", "192.0.0.255", "IETF protocol assignment", "191.255.255.255", "192.0.1.0"),
            List.of("192.0.0.0", "192.0.0.7", "DS-Lite", "", ""),
            List.of("192.0.0.8", "192.0.0.8", "dummy", "", ""),
            List.of("192.0.0.9", "192.0.0.9", "PCP", "", ""),
            List.of("192.0.0.10", "192.0.0.10", "TURN", "", ""),
            List.of("192.0.0.170", "192.0.0.171", "NAT64/DNS64 discovery", "", ""),
            List.of("192.0.2.0", "192.0.2.255", "TEST-NET-1", "192.0.1.255", "192.0.3.0"),
            List.of("192.31.196.0", "192.31.196.255", "AS112", "192.31.195.255", "192.31.197.0"),
            List.of("192.52.193.0", "192.52.193.255", "AMT", "192.52.192.255", "192.52.194.0"),
            List.of("192.88.99.0", "192.88.99.255", "6to4 relay", "192.88.98.255", "192.88.100.0"),
            List.of("192.168.0.0", "192.168.255.255", "private", "192.167.255.255", "192.169.0.0"),
            List.of("192.175.48.0", "192.175.48.255", "AS112", "192.175.47.255", "192.175.49.0"),
            List.of("198.18.0.0", "198.19.255.255", "benchmarking", "198.17.255.255", "198.20.0.0"),
            List.of("198.51.100.0", "198.51.100.255", "TEST-NET-2", "198.51.99.255", "198.51.101.0"),
            List.of("203.0.113.0", "203.0.113.255", "TEST-NET-3", "203.0.112.255", "203.0.114.0"),
            List.of("224.0.0.0", "239.255.255.255", "multicast", "223.255.255.255", ""),
            List.of("240.0.0.0", "255.255.255.254", "reserved", "", ""),
            List.of("255.255.255.255", "255.255.255.255", "broadcast", "", ""));

    /** The same for IANA's IPv6 Special-Purpose Address Registry, site-local and multicast. */
    static final List<List<String>> V6_RANGES = List.of(
            List.of("::", "::", "unspecified", "", ""),
            List.of("::1", "::1", "loopback", "", ""),
            List.of("64:ff9b:1::", "64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "local-use IPv4/IPv6 translation", "", ""),
            List.of("100::", "100::ffff:ffff:ffff:ffff", "discard-only", "", ""),
            List.of("2001:100::", "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", "IETF protocol assignment", "2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
                    "2001:200::"),
            List.of("2001::", "2001:0:ffff:ffff:ffff:ffff:ffff:ffff", "Teredo", "", ""),
            List.of("2001:2::", "2001:2:0:ffff:ffff:ffff:ffff:ffff", "benchmarking", "", ""),
            List.of("2001:10::", "2001:1f:ffff:ffff:ffff:ffff:ffff:ffff", "ORCHID", "", ""),
            List.of("2001:20::", "2001:2f:ffff:ffff:ffff:ffff:ffff:ffff", "ORCHIDv2", "", ""),
            List.of("2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "documentation", "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff",
                    "2001:db9::"),
            List.of("2002::", "2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "6to4", "2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2003::"),
            List.of("3fff::", "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", "documentation", "3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
                    "3fff:1000::"),
            List.of("5f00::", "5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "SRv6", "", ""),
            List.of("fc00::", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "unique-local", "", ""),
            List.of("fe80::", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "link-local", "", ""),
            List.of("fec0::", "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "site-local", "", ""),
            List.of("ff00::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "multicast", "", ""));

    @Test
    void aPrefixWrittenWithHostBitsOrForTheOtherFamilyIsATypoAndRefusedWhenTheTableIsBuilt() {
        assertThatThrownBy(() -> AddressGuard.Cidr.of("192.0.2.1/24", "x")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> AddressGuard.Cidr.of("2001:db8::/16", "x")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> AddressGuard.Cidr.of("::ffff:0:0/96", "x")).as("parsed as IPv4").isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> AddressGuard.Cidr.of("10.0.0.0/33", "x")).isInstanceOf(IllegalArgumentException.class);
        assertThat(AddressGuard.Cidr.of("198.18.0.0/15", "x").contains(address("198.19.255.255").getAddress())).isTrue();
        assertThat(AddressGuard.Cidr.of("198.18.0.0/15", "x").contains(address("198.20.0.0").getAddress())).isFalse();
    }

    @Test
    void everyIpv4SpecialPurposeRangeIsRefusedFromItsFirstToItsLastAddressAndNotOneAddressBeyond() throws Exception {
        checkRanges(V4_RANGES);
    }

    @Test
    void everyIpv6SpecialPurposeRangeIsRefusedFromItsFirstToItsLastAddressAndNotOneAddressBeyond() throws Exception {
        checkRanges(V6_RANGES);
    }

    private void checkRanges(List<List<String>> ranges) throws Exception {
        AddressGuard guard = guard();
        for (List<String> r : ranges) {
            for (String inside : List.of(r.get(0), r.get(1))) {
                assertThat(AddressGuard.forbidden(InetAddress.getByName(inside))).as(inside).contains(r.get(2));
                assertThatThrownBy(() -> guard.check(inside)).as(inside).isInstanceOf(AddressGuard.Refused.class)
                        .hasMessageContaining(r.get(2));
            }
            for (String outside : List.of(r.get(3), r.get(4))) {
                if (!outside.isEmpty()) {
                    assertThat(AddressGuard.forbidden(InetAddress.getByName(outside))).as(outside + ", just outside " + r.get(0)).isNull();
                    assertThat(guard.check(outside)).as(outside).isEqualTo(InetAddress.getByName(outside));
                }
            }
        }
    }

    @Test
    void ipv6BlocksThatAreNotGlobalUnicastAreRefusedAndTheRestOfTheGlobalUnicastSpacePasses() throws Exception {
        for (String reserved : List.of("4000::1", "8000::1", "e000::1", "fe00::1", "200::1", "1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
                "::8.8.8.8", "::ffff:0:808:808")) {
            assertThat(AddressGuard.forbidden(InetAddress.getByName(reserved))).as(reserved).isNotNull();
        }
        for (String global : List.of("2000::1", "2001:200::1", "2400:cb00::1", "2620:4f:7fff:ffff:ffff:ffff:ffff:ffff", "2620:4f:8001::",
                "3ffe::1", "2606:4700::1111")) {
            assertThat(AddressGuard.forbidden(InetAddress.getByName(global))).as(global).isNull();
        }
        assertThat(AddressGuard.forbidden(InetAddress.getByName("2620:4f:8000::53"))).contains("AS112");
        assertThat(AddressGuard.forbidden(InetAddress.getByName("2001:4:112::1"))).contains("AS112");
        assertThat(AddressGuard.forbidden(InetAddress.getByName("2001:3::1"))).contains("AMT");
        assertThat(AddressGuard.forbidden(InetAddress.getByName("2001:1::1"))).contains("PCP");
    }

    @Test
    void mappedAndNat64AddressesAreJudgedAsTheIpv4AddressTheyEmbedAndEveryOtherEmbeddingIsRefused() throws Exception {
        byte[] nat64Public = {0, 0x64, (byte) 0xff, (byte) 0x9b, 0, 0, 0, 0, 0, 0, 0, 0, 8, 8, 8, 8};
        byte[] nat64TestNet = {0, 0x64, (byte) 0xff, (byte) 0x9b, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 192, 0, 2, 2};
        assertThat(AddressGuard.forbidden(java.net.Inet6Address.getByAddress(null, nat64Public, -1)))
                .as("a DNS64 resolver's answer for an IPv4-only public host").isNull();
        assertThat(AddressGuard.forbidden(java.net.Inet6Address.getByAddress(null, nat64TestNet, -1))).contains("TEST-NET-1");
        assertThat(AddressGuard.forbidden(InetAddress.getByName("2002:c000:202::1"))).as("6to4 of TEST-NET-1").contains("6to4");
        assertThat(AddressGuard.forbidden(InetAddress.getByName("2002:808:808::1"))).as("6to4 of a public address").contains("6to4");
        assertThat(AddressGuard.forbidden(InetAddress.getByName("64:ff9b:1::808:808"))).as("local-use NAT64 of a public address")
                .contains("local-use");
        assertThat(AddressGuard.forbidden(InetAddress.getByName("::ffff:192.0.2.2"))).contains("TEST-NET-1");
    }

    @Test
    void loopbackPrivateLinkLocalMetadataMulticastAndReservedAddressesAreRefused() throws Exception {
        AddressGuard guard = guard();
        for (String a : List.of("127.0.0.1", "127.9.9.9", "10.0.0.1", "172.16.5.4", "172.31.255.255", "192.168.1.1", "169.254.169.254",
                "100.100.100.200", "100.64.0.1", "0.0.0.0", "192.0.0.192", "198.18.0.1", "224.0.0.1", "239.255.255.250",
                "240.0.0.1", "255.255.255.255", "::1", "::", "fe80::1", "fd00:ec2::254", "fc00::1", "fec0::1", "ff02::1",
                "::ffff:127.0.0.1", "::ffff:10.1.2.3", "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "2002:7f00:1::1", "::127.0.0.1")) {
            assertThatThrownBy(() -> guard.check(a)).as(a).isInstanceOf(AddressGuard.Refused.class);
        }
    }

    @Test
    void publicAddressesPass() throws Exception {
        AddressGuard guard = guard();
        for (String a : List.of("93.184.216.34", "8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "[2001:4860:4860::8888]")) {
            assertThat(guard.check(a)).as(a).isEqualTo(InetAddress.getByName(AddressGuard.unbracketed(a)));
        }
    }

    @Test
    void aNameOrAnAddressListedInAllowedHostsPassesAndNothingElseDoes() throws Exception {
        AddressGuard byAddress = guard("127.0.0.1", "[::1]");
        assertThat(byAddress.check("127.0.0.1").getHostAddress()).isEqualTo("127.0.0.1");
        assertThat(byAddress.check("[::1]").isLoopbackAddress()).isTrue();
        assertThatThrownBy(() -> byAddress.check("127.0.0.2")).isInstanceOf(AddressGuard.Refused.class);
        assertThatThrownBy(() -> byAddress.check("10.0.0.1")).isInstanceOf(AddressGuard.Refused.class);

        AddressGuard byName = guard("LocalHost");
        assertThat(byName.check("localhost").isLoopbackAddress()).isTrue();
        assertThatThrownBy(() -> byName.check("127.0.0.1")).as("the name is allowed, not every loopback literal")
                .isInstanceOf(AddressGuard.Refused.class);
        assertThatThrownBy(() -> guard().check("localhost")).as("a name that resolves to loopback")
                .isInstanceOf(AddressGuard.Refused.class).hasMessageContaining("loopback");
    }

    @Test
    void aRefusalSaysWhichClassOfAddressItIs() {
        AddressGuard guard = guard();
        assertThatThrownBy(() -> guard.check("169.254.169.254")).hasMessageContaining("link-local");
        assertThatThrownBy(() -> guard.check("10.0.0.1")).hasMessageContaining("private");
        assertThatThrownBy(() -> guard.check("224.0.0.1")).hasMessageContaining("multicast");
        assertThatThrownBy(() -> guard.check("::ffff:127.0.0.1")).hasMessageContaining("loopback");
    }

    @Test
    void anIpv4MappedAddressAsAResolverMayReturnItIsJudgedAsTheAddressItMaps() throws Exception {
        byte[] mappedLoopback = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff, 127, 0, 0, 1};
        byte[] mappedMetadata = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff, (byte) 169, (byte) 254, (byte) 169, (byte) 254};
        byte[] mappedPublic = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff, 8, 8, 8, 8};
        byte[] localNat64 = {0, 0x64, (byte) 0xff, (byte) 0x9b, 0, 1, 0, 0, 0, 0, 0, 0, 10, 0, 0, 1};
        assertThat(AddressGuard.forbidden(java.net.Inet6Address.getByAddress(null, mappedLoopback, -1))).isEqualTo("loopback");
        assertThat(AddressGuard.forbidden(java.net.Inet6Address.getByAddress(null, mappedMetadata, -1))).isEqualTo("link-local");
        assertThat(AddressGuard.forbidden(java.net.Inet6Address.getByAddress(null, mappedPublic, -1))).isNull();
        assertThat(AddressGuard.forbidden(java.net.Inet6Address.getByAddress(null, localNat64, -1))).contains("local-use");
    }
}
