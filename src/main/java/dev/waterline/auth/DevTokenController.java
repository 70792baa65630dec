package dev.waterline.auth;

import java.util.Map;

import tools.jackson.databind.JsonNode;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** {@code POST /api/dev/tokens}: a token for any user, only when {@code waterline.auth.dev-tokens} is on. */
@RestController
class DevTokenController {

    private final Tokens tokens;
    private final AuthProperties properties;

    DevTokenController(Tokens tokens, AuthProperties properties) {
        this.tokens = tokens;
        this.properties = properties;
    }

    @PostMapping("/api/dev/tokens")
    ResponseEntity<Map<String, String>> issue(@RequestBody(required = false) JsonNode body) {
        if (!properties.devTokens()) {
            return ResponseEntity.status(HttpStatus.NOT_FOUND).body(Map.of("error", "not_found", "message", "dev tokens are disabled"));
        }
        JsonNode userId = body == null ? null : body.get("userId");
        if (userId == null || !userId.isString() || userId.asString().isBlank() || userId.asString().length() > 128) {
            return ResponseEntity.badRequest().body(Map.of("error", "invalid", "message", "userId must be a string of 1-128 characters"));
        }
        return ResponseEntity.ok(Map.of("token", tokens.issue(userId.asString(), properties.devTokenTtl())));
    }
}
