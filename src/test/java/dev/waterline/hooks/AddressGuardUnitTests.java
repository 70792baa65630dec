package dev.waterline.hooks;

import java.net.InetAddress;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The SSRF guard's judgement of addresses, on literals (nothing is looked up). */
class AddressGuardUnitTests {

    static HookProperties allowing(String... hosts) {
        return new HookProperties(true, 4, 32, Duration.ofMillis(250), 256, 8, Duration.ofSeconds(10), Duration.ofSeconds(5),
                Duration.ofSeconds(60), Duration.ofSeconds(1), Duration.ofMinutes(10), 12, 5, Duration.ofSeconds(30),
                Duration.ofSeconds(5), List.of(hosts), 10, 0.2, Duration.ofSeconds(1), 0.5, 16, Duration.ofMinutes(1));
    }

    @Test
    void loopbackPrivateLinkLocalMetadataMulticastAndReservedAddressesAreRefused() throws Exception {
        AddressGuard guard = new AddressGuard(allowing());
        for (String a : List.of("127.0.0.1", "127.9.9.9", "10.0.0.1", "172.16.5.4", "172.31.255.255", "192.168.1.1", "169.254.169.254",
                "100.100.100.200", "100.64.0.1", "0.0.0.0", "192.0.0.192", "198.18.0.1", "224.0.0.1", "239.255.255.250",
                "240.0.0.1", "255.255.255.255", "::1", "::", "fe80::1", "fd00:ec2::254", "fc00::1", "fec0::1", "ff02::1",
                "::ffff:127.0.0.1", "::ffff:10.1.2.3", "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "2002:7f00:1::1", "::127.0.0.1")) {
            assertThatThrownBy(() -> guard.check(a)).as(a).isInstanceOf(AddressGuard.Refused.class);
        }
    }

    @Test
    void publicAddressesPass() throws Exception {
        AddressGuard guard = new AddressGuard(allowing());
        for (String a : List.of("93.184.216.34", "8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "[2001:4860:4860::8888]")) {
            assertThat(guard.check(a)).as(a).isEqualTo(InetAddress.getByName(AddressGuard.unbracketed(a)));
        }
    }

    @Test
    void aNameOrAnAddressListedInAllowedHostsPassesAndNothingElseDoes() throws Exception {
        AddressGuard byAddress = new AddressGuard(allowing("127.0.0.1", "[::1]"));
        assertThat(byAddress.check("127.0.0.1").getHostAddress()).isEqualTo("127.0.0.1");
        assertThat(byAddress.check("[::1]").isLoopbackAddress()).isTrue();
        assertThatThrownBy(() -> byAddress.check("127.0.0.2")).isInstanceOf(AddressGuard.Refused.class);
        assertThatThrownBy(() -> byAddress.check("10.0.0.1")).isInstanceOf(AddressGuard.Refused.class);

        AddressGuard byName = new AddressGuard(allowing("LocalHost"));
        assertThat(byName.check("localhost").isLoopbackAddress()).isTrue();
        assertThatThrownBy(() -> byName.check("127.0.0.1")).as("the name is allowed, not every loopback literal")
                .isInstanceOf(AddressGuard.Refused.class);
        assertThatThrownBy(() -> new AddressGuard(allowing()).check("localhost")).as("a name that resolves to loopback")
                .isInstanceOf(AddressGuard.Refused.class).hasMessageContaining("loopback");
    }

    @Test
    void aRefusalSaysWhichClassOfAddressItIs() {
        AddressGuard guard = new AddressGuard(allowing());
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
        assertThat(AddressGuard.forbidden(java.net.Inet6Address.getByAddress(null, localNat64, -1))).isEqualTo("private");
    }
}
