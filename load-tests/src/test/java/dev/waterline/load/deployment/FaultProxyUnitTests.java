package dev.waterline.load.deployment;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The fault proxy against a loopback echo server: what it keeps (every byte, in order) and what it breaks. */
class FaultProxyUnitTests {

    ServerSocket echo;

    @BeforeEach
    void startEcho() throws IOException {
        echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().start(() -> {
            while (!echo.isClosed()) {
                try {
                    Socket s = echo.accept();
                    Thread.ofVirtual().start(() -> {
                        try (s) {
                            s.getInputStream().transferTo(s.getOutputStream());
                        }
                        catch (IOException e) {
                            // the proxy reset or cut it: what the tests make happen
                        }
                    });
                }
                catch (IOException e) {
                    return;   // closed at the end of the test
                }
            }
        });
    }

    @AfterEach
    void stopEcho() throws IOException {
        echo.close();
    }

    private FaultProxy proxy(Duration latency, Duration jitter, double resetRate, long within) {
        return new FaultProxy(0, "127.0.0.1", echo.getLocalPort(), new FaultProxy.Faults(latency, jitter, resetRate, within, 42));
    }

    private static Socket connect(FaultProxy p) throws IOException {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), p.port());
        s.setSoTimeout(20_000);
        return s;
    }

    @Test
    void everyByteArrivesOnceAndInOrderThroughLatencyAndJitter() throws Exception {
        try (FaultProxy p = proxy(Duration.ofMillis(5), Duration.ofMillis(20), 0, 1); Socket s = connect(p)) {
            byte[] sent = new byte[200_000];
            for (int i = 0; i < sent.length; i++) {
                sent[i] = (byte) (i * 31 + i / 251);
            }
            OutputStream out = s.getOutputStream();
            // written in many small pieces, so that each is a chunk of its own with its own jitter
            Thread writer = Thread.ofVirtual().start(() -> {
                try {
                    for (int off = 0; off < sent.length; off += 997) {
                        out.write(sent, off, Math.min(997, sent.length - off));
                        out.flush();
                    }
                    s.shutdownOutput();
                }
                catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            byte[] back = s.getInputStream().readAllBytes();
            writer.join();
            assertThat(back).isEqualTo(sent);
            assertThat(p.stats().bytesUp()).isEqualTo(sent.length);
            assertThat(p.stats().bytesDown()).isEqualTo(sent.length);
            assertThat(p.stats().resets()).isZero();
        }
    }

    @Test
    void theLatencyIsAddedEachWay() throws Exception {
        try (FaultProxy p = proxy(Duration.ofMillis(150), Duration.ZERO, 0, 1); Socket s = connect(p)) {
            long start = System.nanoTime();
            s.getOutputStream().write(7);
            s.getOutputStream().flush();
            assertThat(s.getInputStream().read()).isEqualTo(7);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("a round trip crosses the proxy twice")
                    .isGreaterThanOrEqualTo(Duration.ofMillis(300));
        }
    }

    @Test
    void aConnectionChosenForAResetIsResetPartWayAndNotEverythingArrives() throws Exception {
        try (FaultProxy p = proxy(Duration.ZERO, Duration.ZERO, 1.0, 1000); Socket s = connect(p)) {
            byte[] sent = new byte[50_000];
            Thread writer = Thread.ofVirtual().start(() -> {
                try {
                    s.getOutputStream().write(sent);
                }
                catch (IOException e) {
                    // the reset reaches the writer too
                }
            });
            InputStream in = s.getInputStream();
            long got = 0;
            try {
                for (int n = in.read(new byte[4096]); n >= 0; n = in.read(new byte[4096])) {
                    got += n;
                }
            }
            catch (IOException e) {
                assertThat(e.getMessage()).containsIgnoringCase("reset");
            }
            writer.join();
            assertThat(got).as("at most what passed before the reset").isLessThanOrEqualTo(1000);
            assertThat(p.stats().resets()).isEqualTo(1);
        }
    }

    @Test
    void noConnectionIsResetAtARateOfZero() throws Exception {
        try (FaultProxy none = proxy(Duration.ZERO, Duration.ZERO, 0, 1); Socket s = connect(none)) {
            s.getOutputStream().write(new byte[] {1, 2, 3});
            assertThat(s.getInputStream().readNBytes(3)).containsExactly(1, 2, 3);
            assertThat(none.stats().resets()).isZero();
        }
    }

    @Test
    void refusedConnectionsComeBackAfterRestoreOnTheSamePort() throws Exception {
        try (FaultProxy p = proxy(Duration.ZERO, Duration.ZERO, 0, 1)) {
            Socket before = connect(p);
            before.getOutputStream().write(1);
            assertThat(before.getInputStream().read()).isEqualTo(1);
            p.refuse();
            assertThat(before.getInputStream().read()).as("the open connection is cut").isEqualTo(-1);
            try (Socket refused = new Socket(InetAddress.getLoopbackAddress(), p.port())) {
                // a loopback connect to a port nobody listens on can meet itself (a TCP self-connect): nothing else may answer
                assertThat(refused.getLocalPort()).as("nothing listens on the refused port").isEqualTo(p.port());
            }
            catch (ConnectException expected) {
                // refused, as a host that went away
            }
            p.restore();
            try (Socket after = connect(p)) {
                after.getOutputStream().write(2);
                assertThat(after.getInputStream().read()).isEqualTo(2);
            }
            before.close();
            assertThat(p.stats().connections()).isEqualTo(2);
        }
    }

    @Test
    void faultsSetOnAnOpenConnectionResetItOnceItsTrafficGoesOn() throws Exception {
        try (FaultProxy p = proxy(Duration.ZERO, Duration.ZERO, 0, 100); Socket s = connect(p)) {
            OutputStream out = s.getOutputStream();
            InputStream in = s.getInputStream();
            out.write(new byte[1000]);
            assertThat(in.readNBytes(1000)).as("no faults yet: every byte comes back").hasSize(1000);
            p.faults(new FaultProxy.Faults(Duration.ZERO, Duration.ZERO, 1.0, 100, 42));
            long got = 0;
            try {
                for (int i = 0; i < 100; i++) {
                    out.write(new byte[100]);
                    got += in.readNBytes(100).length;
                }
            }
            catch (IOException e) {
                // the reset, on the write or the read
            }
            assertThat(got).as("reset within the first window after the change, not after all 10,000 bytes").isLessThan(10_000);
            assertThat(p.stats().resets()).isEqualTo(1);
        }
    }

    @Test
    void aLongLivedConnectionMeetsTheResetRateInEveryWindowOfItsTraffic() throws Exception {
        // at 10 % per 1,000-byte window, a connection carrying 1 MB survives with probability 0.9^1000 (about 1e-46)
        try (FaultProxy p = proxy(Duration.ZERO, Duration.ZERO, 0.1, 1000); Socket s = connect(p)) {
            long got = 0;
            try {
                for (int i = 0; i < 1000; i++) {
                    s.getOutputStream().write(new byte[1000]);
                    got += s.getInputStream().readNBytes(1000).length;
                }
            }
            catch (IOException e) {
                // reset
            }
            assertThat(got).isLessThan(1_000_000);
            assertThat(p.stats().resets()).isEqualTo(1);
        }
    }

    @Test
    void aRetargetedProxySendsNewConnectionsToTheNewTargetAndLeavesOpenOnesWhereTheyAre() throws Exception {
        try (ServerSocket other = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
             FaultProxy p = proxy(Duration.ZERO, Duration.ZERO, 0, 1);
             Socket before = connect(p)) {
            before.getOutputStream().write(7);
            assertThat(before.getInputStream().read()).isEqualTo(7);
            p.retarget("127.0.0.1", other.getLocalPort());
            try (Socket after = connect(p); Socket arrived = other.accept()) {
                after.getOutputStream().write(9);
                assertThat(arrived.getInputStream().read()).as("the new connection reached the new target").isEqualTo(9);
            }
            before.getOutputStream().write(8);
            assertThat(before.getInputStream().read()).as("the open one still reaches the echo").isEqualTo(8);
        }
    }

    @Test
    void faultsOutsideTheirRangesAreRefused() {
        assertThatThrownBy(() -> new FaultProxy.Faults(Duration.ofMillis(-1), Duration.ZERO, 0, 1, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new FaultProxy.Faults(Duration.ZERO, Duration.ZERO, 1.5, 1, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new FaultProxy.Faults(Duration.ZERO, Duration.ZERO, 0.5, 0, 1)).isInstanceOf(IllegalArgumentException.class);
    }
}
