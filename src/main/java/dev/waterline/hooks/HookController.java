package dev.waterline.hooks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.github.f4b6a3.ulid.UlidCreator;
import dev.waterline.auth.ApiAuthentication;
import dev.waterline.web.ApiException;
import dev.waterline.web.DatabaseTurns;
import dev.waterline.web.Json;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.JsonNode;

/**
 * PROTOCOL.md §7 over REST: create, list, read (with the breaker and the counts), delete, the
 * dead letters and their replay. Chat members only ({@code 404} otherwise, as for a hook that does
 * not exist); a hook's secret is stored and never answered, nor is any credential in its target
 * ({@link TargetMask}). Every call takes one of the bounded turns at PostgreSQL
 * ({@link DatabaseTurns}).
 */
@RestController
class HookController {

    static final Set<String> EVENTS = Set.of("message", "offline");
    /** The fields a target may have, of every kind (each sink takes its own). */
    static final List<String> TARGET_FIELDS = List.of("url", "uri", "exchange", "routingKey", "topic", "subject", "jetstream",
            "bootstrapServers", "stream");
    static final int MAX_SECRET = 256;
    static final int DEFAULT_DEAD_PAGE = 100;
    static final int MAX_DEAD_PAGE = 1000;
    static final int MAX_REPLAY_IDS = 1000;

    private final HookRepository hooks;
    private final Sinks sinks;
    private final OfflineChats offlineChats;
    private final HookProperties properties;
    private final DatabaseTurns turns;
    private final HookMetrics metrics;
    private final HookWorkers workers;

    HookController(HookRepository hooks, Sinks sinks, OfflineChats offlineChats, HookProperties properties, DatabaseTurns turns,
                   HookMetrics metrics, HookWorkers workers) {
        this.metrics = metrics;
        this.workers = workers;
        this.hooks = hooks;
        this.sinks = sinks;
        this.offlineChats = offlineChats;
        this.properties = properties;
        this.turns = turns;
    }

    static ApiException noSuchHook() {
        return new ApiException(HttpStatus.NOT_FOUND, "not_found", "no such hook");
    }

    @Operation(summary = "Create a hook: every message accepted in the chat from now on is delivered to the target, at least once",
            description = "kind http (url, secret), amqp (uri, exchange, routingKey), mqtt (uri, topic), nats (url, subject, jetstream),"
                    + " kafka (bootstrapServers, topic) or redis (uri, stream); events: message (default) and/or offline. Targets on"
                    + " addresses of an IANA special-purpose range (loopback, private, link-local, documentation, …), multicast addresses"
                    + " and this host's own addresses are refused (400) unless waterline.hooks.allowed-hosts lists them.",
            requestBody = @io.swagger.v3.oas.annotations.parameters.RequestBody(content = @Content(mediaType = "application/json",
                    schema = @Schema(example = "{\"kind\":\"http\",\"url\":\"https://bots.example.com/waterline\",\"secret\":\"s3cret\",\"events\":[\"message\"]}"))))
    @PostMapping("/api/chats/{chatId}/hooks")
    ResponseEntity<byte[]> create(@Parameter(hidden = true) HttpServletRequest request, @PathVariable String chatId,
                                  @RequestBody(required = false) JsonNode body) {
        String caller = ApiAuthentication.userId(request);
        JsonNode b = Json.object(body);
        String kind = Json.string(b, "kind", 1, 16);
        Sink sink = sinks.of(kind);
        if (sink == null) {
            throw ApiException.invalid("kind must be one of " + String.join(", ", sinks.kinds()));
        }
        Map<String, String> fields = new LinkedHashMap<>();
        for (String f : TARGET_FIELDS) {
            JsonNode v = b.get(f);
            if (v == null || v.isNull()) {
                continue;
            }
            if (!v.isString() && !v.isBoolean()) {
                throw ApiException.invalid(f + " must be a string");
            }
            fields.put(f, v.isBoolean() ? Boolean.toString(v.asBoolean()) : v.asString());
        }
        String secret = null;
        JsonNode s = b.get("secret");
        if (s != null && !s.isNull()) {
            if (!"http".equals(kind)) {
                throw ApiException.invalid("secret applies to http hooks only");
            }
            secret = Json.string(b, "secret", 1, MAX_SECRET);
        }
        List<String> events = events(b.get("events"));
        // members only, before the target is looked at: the guard's answer names addresses, which
        // a stranger to the chat must not learn
        if (!turns.run(() -> hooks.isMember(chatId, caller))) {
            throw ApiException.notFound();
        }
        Map<String, String> target;
        try {
            target = sink.target(fields);
        }
        catch (IllegalArgumentException bad) {
            throw ApiException.invalid(bad.getMessage());
        }
        catch (AddressGuard.Refused refused) {
            throw ApiException.invalid(refused.getMessage());
        }
        String hookId = UlidCreator.getMonotonicUlid().toString();
        String secretToStore = secret;
        return turns.run(() -> {
            if (events.contains("offline")) {
                // before the row commits: a message committed after the hook must find its chat here
                offlineChats.add(chatId);
            }
            try {
                HookRepository.Hook h = hooks.create(hookId, chatId, caller, kind, target, secretToStore, events, properties.maxHooksPerChat());
                return Json.answer(HttpStatus.CREATED, view(h));
            }
            catch (HookRepository.NotFound e) {
                throw ApiException.notFound();
            }
            catch (HookRepository.TooMany e) {
                throw ApiException.invalid("a chat has at most " + properties.maxHooksPerChat() + " hooks");
            }
        });
    }

    private static List<String> events(JsonNode node) {
        if (node == null || node.isNull()) {
            return List.of("message");
        }
        if (!node.isArray() || node.isEmpty()) {
            throw ApiException.invalid("events must be a non-empty array of \"message\" and/or \"offline\"");
        }
        Set<String> out = new LinkedHashSet<>();
        for (JsonNode e : node) {
            if (!e.isString() || !EVENTS.contains(e.asString())) {
                throw ApiException.invalid("events must be a non-empty array of \"message\" and/or \"offline\"");
            }
            out.add(e.asString());
        }
        return List.copyOf(out);
    }

    /** A hook as answered: its target's fields with every credential masked ({@link TargetMask}), never its secret. */
    static Map<String, Object> view(HookRepository.Hook h) {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("hookId", h.hookId());
        v.put("chatId", h.chatId());
        v.put("kind", h.kind());
        Map<String, String> shown = TargetMask.shown(h.target());
        v.put("target", shown.getOrDefault("url", shown.getOrDefault("uri", shown.get("bootstrapServers"))));
        v.putAll(shown);
        v.put("events", h.events());
        v.put("hasSecret", h.hasSecret());
        v.put("createdBy", h.createdBy());
        v.put("createdAt", h.createdAt());
        return v;
    }

    @Operation(summary = "The chat's hooks")
    @GetMapping("/api/chats/{chatId}/hooks")
    ResponseEntity<byte[]> list(@Parameter(hidden = true) HttpServletRequest request, @PathVariable String chatId) {
        String caller = ApiAuthentication.userId(request);
        return turns.run(() -> {
            List<HookRepository.Hook> found = hooks.list(chatId, caller);
            if (found.isEmpty() && !hooks.isMember(chatId, caller)) {
                throw ApiException.notFound();
            }
            List<Map<String, Object>> out = new ArrayList<>();
            found.forEach(h -> out.add(view(h)));
            return Json.answer(HttpStatus.OK, Map.of("hooks", out));
        });
    }

    @Operation(summary = "A hook, with its breaker (closed, open or half_open), its deliveries not yet done (pending) and its dead letters (dead)")
    @GetMapping("/api/hooks/{hookId}")
    ResponseEntity<byte[]> one(@Parameter(hidden = true) HttpServletRequest request, @PathVariable String hookId) {
        String caller = ApiAuthentication.userId(request);
        return turns.run(() -> {
            HookRepository.Hook h = hooks.find(hookId, caller).orElseThrow(HookController::noSuchHook);
            long[] counts = hooks.counts(hookId);
            Map<String, Object> v = view(h);
            v.put("breaker", h.breaker());
            v.put("failures", h.failures());
            v.put("pending", counts[0]);
            v.put("dead", counts[1]);
            return Json.answer(HttpStatus.OK, v);
        });
    }

    @Operation(summary = "Delete a hook; its pending deliveries and dead letters are dropped")
    @DeleteMapping("/api/hooks/{hookId}")
    ResponseEntity<byte[]> delete(@Parameter(hidden = true) HttpServletRequest request, @PathVariable String hookId) {
        String caller = ApiAuthentication.userId(request);
        return turns.run(() -> {
            if (!hooks.delete(hookId, caller)) {
                throw noSuchHook();
            }
            workers.purge(hookId);
            return ResponseEntity.noContent().build();
        });
    }

    @Operation(summary = "The hook's dead letters, oldest first")
    @GetMapping("/api/hooks/{hookId}/dead")
    ResponseEntity<byte[]> dead(@Parameter(hidden = true) HttpServletRequest request, @PathVariable String hookId,
                                @RequestParam(required = false) String limit) {
        String caller = ApiAuthentication.userId(request);
        int n = Json.limit(limit, DEFAULT_DEAD_PAGE, MAX_DEAD_PAGE);
        return turns.run(() -> {
            hooks.find(hookId, caller).orElseThrow(HookController::noSuchHook);
            List<Map<String, Object>> out = new ArrayList<>();
            for (HookRepository.DeadLetter d : hooks.dead(hookId, n)) {
                Map<String, Object> v = new LinkedHashMap<>();
                v.put("deliveryId", d.deliveryId());
                v.put("messageId", d.messageId());
                v.put("event", d.event());
                if (d.userId() != null) {
                    v.put("userId", d.userId());
                }
                v.put("attempts", d.attempts());
                v.put("lastError", d.lastError());
                v.put("deadAt", d.deadAt());
                out.add(v);
            }
            return Json.answer(HttpStatus.OK, Map.of("deliveries", out));
        });
    }

    @Operation(summary = "Deliver dead letters again, with a fresh budget: those named, or all with {}",
            requestBody = @io.swagger.v3.oas.annotations.parameters.RequestBody(content = @Content(mediaType = "application/json",
                    schema = @Schema(example = "{\"deliveryIds\":[42]}"))))
    @PostMapping("/api/hooks/{hookId}/dead/replay")
    ResponseEntity<byte[]> replay(@Parameter(hidden = true) HttpServletRequest request, @PathVariable String hookId,
                                  @RequestBody(required = false) JsonNode body) {
        String caller = ApiAuthentication.userId(request);
        List<Long> ids = null;
        if (body != null && !body.isNull()) {
            JsonNode b = Json.object(body);
            JsonNode given = b.get("deliveryIds");
            if (given != null && !given.isNull()) {
                if (!given.isArray() || given.size() > MAX_REPLAY_IDS) {
                    throw ApiException.invalid("deliveryIds must be an array of at most " + MAX_REPLAY_IDS + " delivery ids");
                }
                ids = new ArrayList<>();
                for (JsonNode id : given) {
                    if (id.isIntegralNumber() && id.canConvertToLong()) {
                        ids.add(id.asLong());
                    }
                    else if (id.isString() && id.asString().matches("[0-9]{1,18}")) {
                        ids.add(Long.parseLong(id.asString()));
                    }
                    else {
                        throw ApiException.invalid("deliveryIds must hold delivery ids (numbers)");
                    }
                }
            }
        }
        List<Long> wanted = ids;
        return turns.run(() -> {
            hooks.find(hookId, caller).orElseThrow(HookController::noSuchHook);
            int n = hooks.replay(hookId, wanted);
            metrics.replayed(n);
            return Json.answer(HttpStatus.OK, Map.of("replayed", n));
        });
    }
}
