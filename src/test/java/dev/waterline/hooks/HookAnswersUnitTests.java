package dev.waterline.hooks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a hook's answer shows of its target (POST, the list and GET one all build it with
 * {@link HookController#view}): every credential of every kind masked as {@code ***}, whatever its
 * form, and everything else as stored.
 */
class HookAnswersUnitTests {

    static final HookRepository.Created CREATED = new HookRepository.Created("alice", "2026-01-01T00:00:00Z");


    /** A stored target of {@code kind} with the field {@code field} as given, the credential in it, and the field as answered. */
    record Case(String kind, String field, String stored, String credential, String shown) {
    }

    static final List<Case> CASES = List.of(
            // user-info: user:password, :password and a bare token, for every kind with a URI
            new Case("redis", "uri", "redis://secret@localhost:6379", "secret", "redis://***@localhost:6379"),
            new Case("redis", "uri", "redis://:hunter2@localhost:6379/0", "hunter2", "redis://:***@localhost:6379/0"),
            new Case("redis", "uri", "redis://default:hunter2@localhost:6379", "hunter2", "redis://default:***@localhost:6379"),
            new Case("redis", "uri", "rediss://tok3n@cache.example.com:6380?timeout=5s", "tok3n", "rediss://***@cache.example.com:6380?timeout=5s"),
            new Case("redis", "uri", "redis://tok3n@[2001:4860::1]:6379", "tok3n", "redis://***@[2001:4860::1]:6379"),
            new Case("amqp", "uri", "amqp://guest:hunter2@localhost:5672/vhost", "hunter2", "amqp://guest:***@localhost:5672/vhost"),
            new Case("amqp", "uri", "amqps://tok3n@broker.example.com", "tok3n", "amqps://***@broker.example.com"),
            new Case("amqp", "uri", "amqp://guest:s%40cret@localhost", "s%40cret", "amqp://guest:***@localhost"),
            new Case("mqtt", "uri", "mqtt://user:hunter2@localhost:1883", "hunter2", "mqtt://user:***@localhost:1883"),
            new Case("mqtt", "uri", "mqtts://tok3n@broker.example.com", "tok3n", "mqtts://***@broker.example.com"),
            new Case("mqtt", "uri", "ssl://:hunter2@broker.example.com:8883", "hunter2", "ssl://:***@broker.example.com:8883"),
            new Case("nats", "url", "nats://tok3n@localhost:4222", "tok3n", "nats://***@localhost:4222"),
            new Case("nats", "url", "tls://user:hunter2@nats.example.com", "hunter2", "tls://user:***@nats.example.com"),
            new Case("http", "url", "https://tok3n@hooks.example.com/in", "tok3n", "https://***@hooks.example.com/in"),
            // credentials in the query, by parameter name (case and separators aside), for every kind
            new Case("redis", "uri", "redis://localhost:6379?password=hunter2", "hunter2", "redis://localhost:6379?password=***"),
            new Case("amqp", "uri", "amqp://localhost?auth_token=tok3n&heartbeat=10", "tok3n", "amqp://localhost?auth_token=***&heartbeat=10"),
            new Case("mqtt", "uri", "mqtt://localhost?pwd=hunter2", "hunter2", "mqtt://localhost?pwd=***"),
            new Case("nats", "url", "nats://localhost:4222?token=tok3n", "tok3n", "nats://localhost:4222?token=***"),
            new Case("http", "url", "https://hooks.example.com/in?token=tok3n&x=1", "tok3n", "https://hooks.example.com/in?token=***&x=1"),
            new Case("http", "url", "https://hooks.example.com/in?access_token=tok3n", "tok3n", "https://hooks.example.com/in?access_token=***"),
            new Case("http", "url", "https://hooks.example.com/in?API_KEY=tok3n", "tok3n", "https://hooks.example.com/in?API_KEY=***"),
            new Case("http", "url", "https://hooks.example.com/in?apikey=tok3n", "tok3n", "https://hooks.example.com/in?apikey=***"),
            new Case("http", "url", "https://hooks.example.com/in?api-key=tok3n", "tok3n", "https://hooks.example.com/in?api-key=***"),
            new Case("http", "url", "https://hooks.example.com/in?key=tok3n", "tok3n", "https://hooks.example.com/in?key=***"),
            new Case("http", "url", "https://hooks.example.com/in?Secret=tok3n", "tok3n", "https://hooks.example.com/in?Secret=***"),
            new Case("http", "url", "https://hooks.example.com/in?pass=hunter2", "hunter2", "https://hooks.example.com/in?pass=***"),
            new Case("http", "url", "https://hooks.example.com/in?PassWord=hunter2", "hunter2", "https://hooks.example.com/in?PassWord=***"),
            new Case("http", "url", "https://hooks.example.com/in?auth=tok3n", "tok3n", "https://hooks.example.com/in?auth=***"),
            new Case("http", "url", "https://hooks.example.com/in?sig=tok3n&sv=2024", "tok3n", "https://hooks.example.com/in?sig=***&sv=2024"),
            new Case("http", "url", "https://hooks.example.com/in?X-Amz-Signature=tok3n", "tok3n",
                    "https://hooks.example.com/in?X-Amz-Signature=***"),
            new Case("http", "url", "https://hooks.example.com/in?credential=tok3n", "tok3n", "https://hooks.example.com/in?credential=***"),
            new Case("http", "url", "https://hooks.example.com/in?a=1&credentials=tok3n", "tok3n",
                    "https://hooks.example.com/in?a=1&credentials=***"),
            new Case("http", "url", "https://hooks.example.com/in?x=1;pwd=hunter2", "hunter2", "https://hooks.example.com/in?x=1;pwd=***"),
            new Case("http", "url", "https://hooks.example.com/in?to%6Ben=tok3n", "tok3n", "https://hooks.example.com/in?to%6Ben=***"),
            // a bootstrap server written with user-info
            new Case("kafka", "bootstrapServers", "tok3n@localhost:9092,broker2:9092", "tok3n", "***@localhost:9092,broker2:9092"),
            // nothing to mask: shown as stored
            new Case("http", "url", "https://hooks.example.com/in?page=2&x=y", null, "https://hooks.example.com/in?page=2&x=y"),
            new Case("redis", "uri", "redis://localhost:6379/3", null, "redis://localhost:6379/3"),
            new Case("kafka", "bootstrapServers", "localhost:9092,[::1]:9093", null, "localhost:9092,[::1]:9093"));

    /** The other fields each kind has, none of which can carry a credential. */
    static Map<String, String> target(Case c) {
        Map<String, String> t = new LinkedHashMap<>();
        t.put(c.field(), c.stored());
        switch (c.kind()) {
            case "amqp" -> {
                t.put("exchange", "x");
                t.put("routingKey", "k");
            }
            case "mqtt", "kafka" -> t.put("topic", "t");
            case "nats" -> {
                t.put("subject", "s");
                t.put("jetstream", "false");
            }
            case "redis" -> t.put("stream", "s");
            default -> {
            }
        }
        return t;
    }

    @Test
    void everyCredentialOfEveryKindIsMaskedInTheAnswerAndEverythingElseIsShownAsStored() {
        List<String> wrong = new ArrayList<>();
        for (Case c : CASES) {
            Map<String, String> target = target(c);
            Map<String, Object> view = HookController.view(new HookRepository.Hook("h", "c", CREATED, c.kind(), target, false,
                    List.of("message"), new Breaker.State("closed", 0)));
            if (c.credential() != null && view.toString().contains(c.credential())) {
                wrong.add(c.stored() + ": the answer holds " + c.credential() + ": " + view);
            }
            if (!c.shown().equals(view.get(c.field())) || !c.shown().equals(view.get("target"))) {
                wrong.add(c.stored() + ": shown as " + view.get(c.field()) + " (target " + view.get("target") + "), not " + c.shown());
            }
            target.forEach((field, value) -> {
                if (!field.equals(c.field()) && !value.equals(view.get(field))) {
                    wrong.add(c.stored() + ": " + field + " shown as " + view.get(field));
                }
            });
        }
        assertThat(wrong).isEmpty();
    }

    @Test
    void aTargetFieldNoSinkDeclaresIsMaskedWhole() {
        Map<String, String> target = new LinkedHashMap<>();
        target.put("uri", "mqtt://localhost:1883");
        target.put("topic", "t");
        target.put("password", "hunter2");
        Map<String, Object> view = HookController.view(new HookRepository.Hook("h", "c", CREATED, "mqtt", target, false,
                List.of("message"), new Breaker.State("closed", 0)));
        assertThat(view).containsEntry("password", "***").containsEntry("topic", "t");
    }

    @Test
    void theStoredTargetIsLeftAsItWasForTheSinkToUse() {
        Map<String, String> target = new LinkedHashMap<>(Map.of("uri", "redis://secret@localhost:6379", "stream", "s"));
        HookRepository.Hook h = new HookRepository.Hook("h", "c", CREATED, "redis", target, false,
                List.of("message"), new Breaker.State("closed", 0));
        HookController.view(h);
        assertThat(h.target()).containsEntry("uri", "redis://secret@localhost:6379");
    }
}
