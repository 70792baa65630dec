package dev.waterline.support;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * File uploads written on a raw socket, for what an HTTP client cannot show: the answer that comes
 * before the body was sent, and the answer to a chunked body that grows past its limit (a client
 * still sending would see the server's close as a reset instead of the answer).
 */
public final class RawUploads {

    private RawUploads() {
    }

    /**
     * Announces {@code declaredLength} bytes, sends 1 KiB of them and reads the status line: an
     * endpoint that refuses before reading the body answers without the rest.
     */
    public static String statusBeforeTheBody(int port, String path, String token, long declaredLength) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 2000);
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(("POST " + path + " HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + token
                    + "\r\nContent-Type: application/octet-stream\r\nContent-Length: " + declaredLength + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.write(new byte[1024]);
            out.flush();
            return new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII)).readLine();
        }
    }

    /**
     * Sends {@code chunks} chunks of {@code chunkBytes} as a chunked body (no length to refuse it
     * by) while reading the status line, which it returns; stops sending when the server closes.
     */
    public static String statusOfAGrowingBody(int port, String path, String token, String type, int chunkBytes, int chunks)
            throws IOException, InterruptedException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 2000);
            s.setSoTimeout(60_000);
            OutputStream out = s.getOutputStream();
            out.write(("POST " + path + " HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + token
                    + "\r\nContent-Type: " + type + "\r\nTransfer-Encoding: chunked\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            Thread sender = Thread.ofVirtual().start(() -> {
                byte[] chunk = new byte[chunkBytes];
                byte[] head = (Integer.toHexString(chunk.length) + "\r\n").getBytes(StandardCharsets.US_ASCII);
                try {
                    for (int i = 0; i < chunks; i++) {
                        out.write(head);
                        out.write(chunk);
                        out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
                    }
                    out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                }
                catch (IOException closedByTheServer) {
                    // the server stopped reading past the limit: the rest is not wanted
                }
            });
            String status = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII)).readLine();
            sender.join(Duration.ofSeconds(30));
            return status;
        }
    }
}
