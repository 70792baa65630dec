package dev.waterline.auth;

import java.util.Map;

import dev.waterline.input.InputGate;
import tools.jackson.databind.JsonNode;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /api/dev/tokens}: a token for any user, only when {@code waterline.auth.dev-tokens}
 * is on (the zero-configuration mode, or an operator who turned it on); {@code 404} otherwise.
 */
@RestController
class DevTokenController {

    private final Tokens tokens;
    private final AuthProperties properties;

    DevTokenController(Tokens tokens, AuthProperties properties) {
        this.tokens = tokens;
        this.properties = properties;
    }

    @Operation(summary = "A token for any user (dev tokens on only; 404 otherwise)",
            requestBody = @io.swagger.v3.oas.annotations.parameters.RequestBody(content = @Content(
                    schema = @Schema(example = "{\"userId\":\"alice\"}"))),
            responses = {
                    @ApiResponse(responseCode = "200", description = "{\"token\":\"<jwt>\"}"),
                    @ApiResponse(responseCode = "404", description = "dev tokens are off")})
    @PostMapping("/api/dev/tokens")
    ResponseEntity<Map<String, String>> issue(@RequestBody(required = false) JsonNode body) {
        if (!properties.devTokens()) {
            return ResponseEntity.status(HttpStatus.NOT_FOUND).body(Map.of("error", "not_found", "message", "dev tokens are disabled"));
        }
        JsonNode userId = body == null || !body.isObject() ? null : body.get("userId");
        String problem = userId == null || !userId.isString() ? "must be a string"
                : InputGate.idProblem(userId.asString(), 1, Tokens.MAX_SUBJECT);
        if (problem != null || userId.asString().isBlank()) {
            return ResponseEntity.badRequest().body(Map.of("error", "invalid", "message",
                    "userId " + (problem == null ? "must not be blank" : problem)
                            + " (a string of 1-" + Tokens.MAX_SUBJECT + " characters, no control characters)"));
        }
        return ResponseEntity.ok(Map.of("token", tokens.issue(userId.asString(), properties.devTokenTtl())));
    }
}
