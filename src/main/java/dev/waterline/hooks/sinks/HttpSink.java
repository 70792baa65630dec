package dev.waterline.hooks.sinks;

import java.net.URI;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.waterline.hooks.AddressGuard;
import dev.waterline.hooks.HookProperties;
import dev.waterline.hooks.Sink;
import org.springframework.stereotype.Component;

/**
 * {@code http} hooks with the JDK's HTTP client: a {@code POST} of the JSON payload with
 * {@code Waterline-Idempotency-Key}, {@code Waterline-Attempt} and, when the hook has a secret,
 * {@code Waterline-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>}
 * (PROTOCOL.md §7). 2xx is done; a timeout, a connection failure, 408, 429 and 5xx are retried
 * ({@code Retry-After} passed on); any other status, a redirect included (never followed: it could
 * lead to an address the guard refuses), is permanent.
 *
 * <p>The request goes to the address the SSRF guard checked, never to the name again: the URI is
 * rewritten to that address and the name travels in the {@code Host} header (which the JDK client
 * allows once {@code jdk.httpclient.allowRestrictedHeaders} names it, set before the client's first
 * use) and, over TLS, as the SNI name, against which the JDK's trust manager verifies the
 * certificate (it checks the requested server name when one was sent). A client per TLS host name
 * carries that SNI name; plain HTTP shares one client.
 */
@Component
class HttpSink implements Sink {

    static {
        String allowed = System.getProperty("jdk.httpclient.allowRestrictedHeaders", "");
        if (!List.of(allowed.toLowerCase(java.util.Locale.ROOT).split(",")).contains("host")) {
            System.setProperty("jdk.httpclient.allowRestrictedHeaders", allowed.isBlank() ? "host" : allowed + ",host");
        }
    }

    static final Map<String, Integer> SCHEMES = Map.of("http", 80, "https", 443);

    private final AddressGuard guard;
    private final HookProperties properties;
    private final Clock clock;
    private final HttpClient plain;
    private final Cache<String, HttpClient> tls;

    HttpSink(AddressGuard guard, HookProperties properties, Clock clock) {
        this.guard = guard;
        this.properties = properties;
        this.clock = clock;
        this.plain = client(null);
        try {
            HttpRequest.newBuilder(URI.create("http://127.0.0.1/")).header("Host", "check.invalid");
        }
        catch (IllegalArgumentException e) {
            // the JDK client read its restricted headers before this class could allow Host
            throw new IllegalStateException("the JDK HTTP client refuses the Host header: start the JVM with"
                    + " -Djdk.httpclient.allowRestrictedHeaders=host (http hooks connect to the checked address and name the host in it)", e);
        }
        this.tls = Caffeine.newBuilder().maximumSize(256).expireAfterAccess(Duration.ofMinutes(10))
                .<String, HttpClient>removalListener((host, client, cause) -> {
                    if (client != null) {
                        client.close();
                    }
                }).build();
    }

    private HttpClient client(String sniHost) {
        // The client's own executor (a pool it keeps warm): a virtual thread per task, tried
        // first, starts a thread for each of the many small stages of every exchange.
        HttpClient.Builder b = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .followRedirects(HttpClient.Redirect.NEVER)
                .connectTimeout(properties.connectTimeout());
        if (sniHost != null) {
            try {
                SSLParameters p = SSLContext.getDefault().getDefaultSSLParameters();
                p.setServerNames(List.of(new SNIHostName(sniHost)));
                b.sslParameters(p);
            }
            catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("no default TLS context", e);
            }
        }
        return b.build();
    }

    @Override
    public String kind() {
        return "http";
    }

    @Override
    public Map<String, String> target(Map<String, String> fields) throws AddressGuard.Refused {
        URI u = Endpoint.parse("url", fields.get("url"), SCHEMES, false);
        Fields.check(u.getHost(), guard);
        Map<String, String> target = new LinkedHashMap<>();
        target.put("url", u.toString());
        return target;
    }

    @Override
    public Sink.Outcome deliver(Call call) {
        Endpoint e;
        try {
            e = Endpoint.resolve("url", call.target().get("url"), SCHEMES, false, guard);
        }
        catch (AddressGuard.Refused refused) {
            return new Outcome.Permanent(refused.getMessage());
        }
        catch (UnknownHostException | IllegalArgumentException unresolved) {
            return Outcome.retry(Outcome.describe(unresolved));
        }
        URI u = e.uri();
        String pathAndQuery = (u.getRawPath() == null || u.getRawPath().isEmpty() ? "/" : u.getRawPath())
                + (u.getRawQuery() == null ? "" : "?" + u.getRawQuery());
        URI pinned = URI.create(e.scheme() + "://" + e.pinnedAuthority() + pathAndQuery);
        HttpRequest.Builder request = HttpRequest.newBuilder(pinned)
                .timeout(properties.callTimeout())
                .header("Host", u.getRawAuthority())
                .header("Content-Type", "application/json")
                .header("User-Agent", "Waterline-Hooks")
                .header("Waterline-Idempotency-Key", call.idempotencyKey())
                .header("Waterline-Attempt", Integer.toString(call.attempt()))
                .POST(HttpRequest.BodyPublishers.ofString(call.payload(), StandardCharsets.UTF_8));
        if (call.secret() != null) {
            request.header("Waterline-Signature", signature(call.secret(), clock.instant().getEpochSecond(), call.payload()));
        }
        boolean secure = e.secure(Set.of("https"));
        HttpClient client = secure && !e.host().equals(e.address().getHostAddress()) && e.host().indexOf(':') < 0
                ? tls.get(e.host().toLowerCase(java.util.Locale.ROOT), this::client)
                : plain;
        // The request timeout stops counting once the headers are in, and a body may then trickle
        // for ever: the whole exchange, body included, is bounded here, and cancelled past it.
        CompletableFuture<HttpResponse<Void>> exchange = client.sendAsync(request.build(), HttpResponse.BodyHandlers.discarding());
        try {
            HttpResponse<Void> response = exchange.get(properties.callTimeout().toMillis(), TimeUnit.MILLISECONDS);
            return classify(response.statusCode(), response.headers(), clock);
        }
        catch (TimeoutException timeout) {
            exchange.cancel(true);
            return Outcome.retry("timed out after " + properties.callTimeout().toMillis() + " ms");
        }
        catch (ExecutionException failed) {
            return failed.getCause() instanceof HttpTimeoutException
                    ? Outcome.retry("timed out after " + properties.callTimeout().toMillis() + " ms")
                    : Outcome.retry(Outcome.describe(failed.getCause() == null ? failed : failed.getCause()));
        }
        catch (InterruptedException interrupted) {
            exchange.cancel(true);
            Thread.currentThread().interrupt();
            return Outcome.retry("interrupted (the server is stopping)");
        }
    }

    /** A status and its headers, as PROTOCOL.md §7 classes them. */
    static Sink.Outcome classify(int status, HttpHeaders headers, Clock clock) {
        if (status >= 200 && status < 300) {
            return Outcome.DONE;
        }
        String error = "HTTP " + status;
        if (status == 408 || status == 429 || status >= 500) {
            return new Outcome.Retry(error, headers.firstValue("Retry-After").map(v -> retryAfter(v, clock)).orElse(null));
        }
        return new Outcome.Permanent(error);
    }

    /** A {@code Retry-After} value: delay-seconds or an HTTP-date; null when it is neither. */
    static Duration retryAfter(String value, Clock clock) {
        String v = value.strip();
        if (!v.isEmpty() && v.chars().allMatch(Character::isDigit)) {
            return v.length() > 9 ? Duration.ofSeconds(999_999_999) : Duration.ofSeconds(Long.parseLong(v));
        }
        try {
            Duration d = Duration.between(clock.instant(), ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant());
            return d.isNegative() ? Duration.ZERO : d;
        }
        catch (DateTimeParseException e) {
            // a Retry-After that is neither form is the target's mistake: our own backoff applies
            return null;
        }
    }

    /** {@code t=<t>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>}. */
    static String signature(String secret, long unixSeconds, String body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            byte[] digest = mac.doFinal((unixSeconds + "." + body).getBytes(StandardCharsets.UTF_8));
            return "t=" + unixSeconds + ",v1=" + HexFormat.of().formatHex(digest);
        }
        catch (NoSuchAlgorithmException | InvalidKeyException e) {
            throw new IllegalStateException("HMAC-SHA256 is not available", e);
        }
    }

    @Override
    public void close() {
        tls.invalidateAll();
        tls.cleanUp();
        plain.close();
    }
}
