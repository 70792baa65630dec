package dev.waterline.web;

import io.swagger.v3.oas.annotations.Hidden;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.util.HtmlUtils;

/**
 * In the zero-configuration mode (or wherever {@code waterline.web.home-page} is on): {@code /} is
 * the browser demo (a chat page built on the JavaScript client, its files under {@code /demo/}
 * and the client's under {@code /client/}, see {@link WebConfig}), and {@code /start} a small page
 * that says what this server is, how to take the first steps with curl, and where its descriptions
 * are (OpenAPI, and the contract {@link ContractFiles} serves in every mode). All 404 otherwise.
 * The demo's page is sent with a Content-Security-Policy that allows this origin only: it makes
 * no request anywhere else, and a message body can never run as script.
 */
@RestController
@Hidden
class HomePage {

    static final String DEMO_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
            + " connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
    private static final org.springframework.core.io.ClassPathResource DEMO = new org.springframework.core.io.ClassPathResource("demo/index.html");

    private final WebProperties properties;
    /** Whether the dev echo bot answers ({@code waterline.streams.dev-bots}, read as a property: streams call web, not the reverse). */
    private final boolean echoBot;

    HomePage(WebProperties properties, org.springframework.core.env.Environment environment) {
        this.properties = properties;
        this.echoBot = environment.getProperty("waterline.streams.dev-bots", Boolean.class, false);
    }

    private static final String STREAMS = """
            <h2>Watch a durable stream</h2>
            <p>The dev echo bot joins a chat and replies word by word as a stream; follow it as server-sent events
            (or <code>{"type":"subscribe","streamId":"…"}</code> on the WebSocket):</p>
            <pre>curl -s -X POST %1$s/api/dev/bots/echo -H "Authorization: Bearer $TOKEN" \\
                 -H 'Content-Type: application/json' -d '{"chatId":"…"}'
            curl -N "%1$s/api/streams/STREAM_ID/events?access_token=$TOKEN"</pre>
            """;

    @GetMapping("/")
    ResponseEntity<byte[]> demo() throws java.io.IOException {
        if (!properties.homePage()) {
            throw new ApiException(HttpStatus.NOT_FOUND, "not_found", "no such endpoint");
        }
        byte[] page;
        try (java.io.InputStream in = DEMO.getInputStream()) {
            page = in.readAllBytes();
        }
        return ResponseEntity.ok().contentType(MediaType.TEXT_HTML)
                .header("Content-Security-Policy", DEMO_POLICY)
                .header("X-Content-Type-Options", "nosniff")
                .header("Cache-Control", "no-cache")
                .body(page);
    }

    @GetMapping("/start")
    ResponseEntity<String> start(HttpServletRequest request) {
        if (!properties.homePage()) {
            throw new ApiException(HttpStatus.NOT_FOUND, "not_found", "no such endpoint");
        }
        String base = HtmlUtils.htmlEscape(request.getScheme() + "://" + request.getServerName() + ":" + request.getServerPort());
        String ws = base.replaceFirst("^http", "ws");
        String html = """
                <!doctype html>
                <html lang="en"><head><meta charset="utf-8"><title>Waterline</title>
                <style>body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;line-height:1.5}
                code,pre{background:#f3f3f3;padding:.1rem .3rem;border-radius:3px}pre{padding:.6rem;overflow-x:auto}</style></head>
                <body>
                <h1>Waterline</h1>
                <p>A chat backend that never loses an accepted message: sends over a WebSocket, committed to
                PostgreSQL before they are answered <code>accepted</code>, delivered at least once, and readable from
                history by whoever was away. This server is set up for local development: dev tokens are on, so
                anyone who reaches it can get a token for any user.</p>
                <h2>First steps</h2>
                <pre>curl -s -X POST %1$s/api/dev/tokens -H 'Content-Type: application/json' -d '{"userId":"alice"}'
                TOKEN=…   # the token from the answer
                curl -s -X POST %1$s/api/chats -H "Authorization: Bearer $TOKEN" \\
                     -H 'Content-Type: application/json' -d '{"members":["bob"],"title":"plans"}'</pre>
                <p>Then open <code>%2$s/ws?access_token=$TOKEN</code>: the first frame is <code>welcome</code>; send
                <code>{"type":"send","correlationId":"c1","chatId":"…","body":"hi"}</code> and wait for
                <code>accepted</code>.</p>
                %3$s
                <h2>More</h2>
                <ul>
                <li><a href="/">The demo</a>: a chat page in this browser, built on the JavaScript client
                (<code>clients/js</code>, served here under <code>/client/</code>)</li>
                <li><a href="/swagger-ui.html">API documentation</a> (<a href="/v3/api-docs">OpenAPI</a>), the
                WebSocket frames (<a href="/docs/asyncapi.yaml">AsyncAPI</a>) and the whole wire contract
                (<a href="/docs/PROTOCOL.md">PROTOCOL.md</a>)</li>
                <li><a href="/actuator/health">Health</a>, <a href="/actuator/prometheus">metrics</a></li>
                <li>The design and the operations guide are in the project's repository (README,
                docs/DESIGN.md, docs/ARCHITECTURE.md, docs/OPERATIONS.md), beside the contract
                (docs/PROTOCOL.md, docs/asyncapi.yaml).</li>
                </ul>
                </body></html>
                """.formatted(base, ws, echoBot ? STREAMS.formatted(base) : "");
        return ResponseEntity.ok().contentType(MediaType.TEXT_HTML).body(html);
    }
}
