package dev.waterline.web;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.waterline.support.Api;
import dev.waterline.support.WaterlineIntegrationTest;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A request whose target holds malformed percent-encoding ({@code %} without two hex digits) or
 * encodes bytes that are not UTF-8 is the client's mistake on every path: {@code 400}, with the
 * error body of PROTOCOL.md §2, never a {@code 500} with a stack trace in the log; and the server
 * answers the next well-formed request as before. The requests are written on a raw socket, since
 * an HTTP client of the JDK would refuse to send most of them.
 */
@WaterlineIntegrationTest
class MalformedEncodingIntegrationTests {

    /** Request targets, each malformed in its path or its query. */
    static final List<String> MALFORMED = List.of(
            "/actuator/health?x=%FF",
            "/actuator/health?x=%",
            "/actuator/prometheus?name=%G1",
            "/actuator/health/%FF",
            "/api/chats?x=%FF",
            "/api/chats?limit=%",
            "/api/chats?limit=1%2",
            "/api/chats?%FF=1",
            "/api/chats?x=%ED%A0%80",
            "/api/chats?x=%C0%AF",
            "/api/chats?x=%E2%82",
            "/api/chats/%FF",
            "/api/chats/%FF/messages",
            "/api/chats/abc%E2%82/messages?limit=5",
            "/api/chats/%zz",
            "/api/dev/tokens?x=%FF",
            "/ws?access_token=%FF",
            "/ws?batch=%",
            "/?x=%FF",
            "/start?x=%",
            "/demo/%FF",
            "/v3/api-docs?x=%FF",
            "/v3/api-docs/%FF",
            "/swagger-ui.html?x=%FF",
            "/swagger-ui/index.html?q=%E0%80");

    @LocalServerPort
    int port;

    record Answer(int status, String body) {
    }

    @Test
    void malformedPercentEncodingIsA400OnEveryPathWithOrWithoutATokenAndLogsNoStackTrace() throws Exception {
        Api api = new Api(port);
        String token = api.token("encoding-alice");
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        root.addAppender(logged);
        List<String> wrong = new ArrayList<>();
        try {
            for (String target : MALFORMED) {
                for (String auth : new String[] {null, token}) {
                    String what = "GET " + target + (auth == null ? "" : " (with a token)");
                    Answer a = get(target, auth, target.startsWith("/ws"));
                    if (a.status() != 400) {
                        wrong.add(what + " → " + a.status() + " " + a.body());
                        continue;
                    }
                    if (target.startsWith("/api/") && !isInvalidBody(a.body())) {
                        wrong.add(what + " → 400 but " + a.body());
                    }
                }
            }
            Answer form = send("POST /api/chats HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token
                    + "\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 6\r\nConnection: close\r\n\r\nx=%FF&");
            if (form.status() != 400 || !isInvalidBody(form.body())) {
                wrong.add("POST /api/chats with a form body x=%FF → " + form.status() + " " + form.body());
            }
        }
        finally {
            root.detachAppender(logged);
        }
        assertThat(wrong).as("answers other than 400 invalid").isEmpty();
        assertThat(logged.list).as("no stack trace at WARN or ERROR")
                .noneMatch(e -> e.getLevel().isGreaterOrEqual(Level.WARN) && e.getThrowableProxy() != null);
        assertThat(logged.list).as("nothing from the web layer or the container above DEBUG")
                .noneMatch(e -> e.getLevel().isGreaterOrEqual(Level.INFO)
                        && (e.getLoggerName().startsWith("org.apache") || e.getLoggerName().startsWith("org.springframework.web")
                        || e.getLoggerName().startsWith("org.springframework.boot") || e.getLoggerName().startsWith("dev.waterline.web")));

        assertThat(get("/actuator/health", null, false).status()).as("a well-formed request afterwards").isEqualTo(200);
        assertThat(get("/api/chats?limit=5&x=%C3%A9", token, false).status()).as("well-formed UTF-8 in a query").isEqualTo(200);
        assertThat(api.get("/api/chats", token).status()).isEqualTo(200);
    }

    /** PROTOCOL.md §2's {@code {"error":"invalid","message":"…"}}. */
    private static boolean isInvalidBody(String text) {
        try {
            JsonNode body = Api.JSON.readTree(text);
            return "invalid".equals(body.path("error").asString()) && !body.path("message").asString().isBlank();
        }
        catch (RuntimeException notJson) {
            return false;
        }
    }

    private Answer get(String target, String token, boolean upgrade) throws IOException {
        StringBuilder request = new StringBuilder("GET ").append(target).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n");
        if (token != null) {
            request.append("Authorization: Bearer ").append(token).append("\r\n");
        }
        if (upgrade) {
            request.append("Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n")
                    .append("Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n");
        }
        else {
            request.append("Connection: close\r\n");
        }
        return send(request.append("\r\n").toString());
    }

    /** Writes {@code request} as it is and reads the answer to the end (a chunked body de-chunked). */
    private Answer send(String request) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(request.getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            InputStream in = s.getInputStream();
            String head = readHead(in);
            int status = Integer.parseInt(head.substring(9, 12));
            String lower = head.toLowerCase(java.util.Locale.ROOT);
            byte[] body;
            if (lower.contains("transfer-encoding: chunked")) {
                body = dechunk(in);
            }
            else if (lower.contains("content-length: ")) {
                int from = lower.indexOf("content-length: ") + 16;
                int length = Integer.parseInt(lower.substring(from, lower.indexOf("\r\n", from)).strip());
                body = in.readNBytes(length);
            }
            else if (status == 101) {
                body = new byte[0];
            }
            else {
                body = in.readAllBytes();
            }
            return new Answer(status, new String(body, StandardCharsets.UTF_8));
        }
    }

    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("the answer ended in its head: " + head.toString(StandardCharsets.ISO_8859_1));
            }
            head.write(b);
            matched = (b == '\r' && (matched == 0 || matched == 2)) || (b == '\n' && (matched == 1 || matched == 3)) ? matched + 1 : 0;
        }
        return head.toString(StandardCharsets.ISO_8859_1);
    }

    private static byte[] dechunk(InputStream in) throws IOException {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        while (true) {
            StringBuilder size = new StringBuilder();
            for (int b = in.read(); b != '\n'; b = in.read()) {
                if (b < 0) {
                    throw new IOException("a chunked body ended early");
                }
                if (b != '\r') {
                    size.append((char) b);
                }
            }
            int n = Integer.parseInt(size.toString().split(";")[0].strip(), 16);
            if (n == 0) {
                return body.toByteArray();
            }
            body.write(in.readNBytes(n));
            in.readNBytes(2);
        }
    }
}
