package dev.waterline.load.streams;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The REST side of a streams run's plan ({@link StreamLoad}): its users (named after the run, so
 * that runs against one server do not meet), their tokens (signed with the started server's secret,
 * or the dev endpoint's), the chats and streams made before the load, a stream's completion, and
 * the server's counters read from {@code /actuator/prometheus}.
 */
final class StreamRest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final HttpClient http;
    private final String run;
    private final String producerBase;
    private final String secret;
    private final Map<String, String> tokens = new ConcurrentHashMap<>();

    StreamRest(HttpClient http, String run, String producerBase, String secret) {
        this.http = http;
        this.run = run;
        this.producerBase = producerBase;
        this.secret = secret;
    }

    String user(String name) {
        return "sl" + run + "-" + name;
    }

    String token(String user) throws Exception {
        String t = tokens.get(user);
        if (t != null) {
            return t;
        }
        if (secret != null) {
            SignedJWT jwt = new SignedJWT(new JWSHeader(JWSAlgorithm.HS256), new JWTClaimsSet.Builder()
                    .subject(user).expirationTime(Date.from(Instant.now().plus(Duration.ofDays(1)))).build());
            jwt.sign(new MACSigner(secret.getBytes(StandardCharsets.UTF_8)));
            t = jwt.serialize();
        }
        else {
            t = post(producerBase, "/api/dev/tokens", null, Map.of("userId", user)).get("token").asString();
        }
        tokens.put(user, t);
        return t;
    }

    String createChat(String owner, List<String> members) throws Exception {
        return post(producerBase, "/api/chats", token(owner), Map.of("members", members)).get("chatId").asString();
    }

    String open(String producer, String chat) throws Exception {
        return post(producerBase, "/api/chats/" + chat + "/streams", token(producer), Map.of()).get("streamId").asString();
    }

    void complete(String producer, ProducedStream s) throws Exception {
        post(producerBase, "/api/streams/" + s.id + "/complete", token(producer), Map.of("lastSeq", s.ackedSeq.get()));
    }

    private JsonNode post(String base, String path, String token, Object body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() / 100 != 2) {
            throw new IllegalStateException(path + " answered " + r.statusCode() + " " + r.body());
        }
        return JSON.readTree(r.body());
    }

    /** The node's counters, summed over their labels, by name. */
    Map<String, Double> scrape(String base) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base + "/actuator/prometheus")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        Map<String, Double> sums = new LinkedHashMap<>();
        for (String line : r.body().split("\n")) {
            if (line.isEmpty() || line.charAt(0) == '#') {
                continue;
            }
            int sp = line.lastIndexOf(' ');
            String key = line.substring(0, sp);
            String name = key.contains("{") ? key.substring(0, key.indexOf('{')) : key;
            sums.merge(name, Double.parseDouble(line.substring(sp + 1)), Double::sum);
        }
        return sums;
    }
}
