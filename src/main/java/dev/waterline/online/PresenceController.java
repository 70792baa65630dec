package dev.waterline.online;

import java.time.Instant;

import dev.waterline.auth.ApiAuthentication;
import dev.waterline.input.InputGate;
import dev.waterline.web.ApiException;
import dev.waterline.web.DatabaseTurns;
import dev.waterline.web.Json;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.JsonNode;

/**
 * PROTOCOL.md §10 presence over REST: {@code GET /api/users/{userId}/presence}, only about a user
 * who shares a chat with the caller (anyone else is 404, exactly like a user who does not exist;
 * the caller may always ask about themselves), answering what was last announced; and the caller's
 * settings, {@code GET}/{@code PUT /api/me/settings} ({@code {"presence":"hidden"|"visible"}}). A
 * hidden user is {@code offline} without {@code lastSeen} to everyone else, and to themselves
 * what is announced of them, with {@code "hidden":true}.
 */
@RestController
class PresenceController {

    static final int MAX_USER_ID = 128;

    /** A user's presence; {@code lastSeen} null when online, hidden or unknown; {@code hidden} only to oneself. */
    @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
    record PresenceView(String userId, String state, String lastSeen, Boolean hidden) {
    }

    /** The caller's settings. */
    record Settings(String presence) {
    }

    private final OnlineRepository repository;
    private final OnlineState state;
    private final Online online;
    private final DatabaseTurns turns;

    PresenceController(OnlineRepository repository, OnlineState state, Online online, DatabaseTurns turns) {
        this.repository = repository;
        this.state = state;
        this.online = online;
        this.turns = turns;
    }

    @Operation(summary = "A user's presence (only of someone who shares a chat with the caller)",
            responses = @ApiResponse(responseCode = "200", description = "online, or offline with lastSeen when known",
                    content = @Content(mediaType = "application/json", schema = @Schema(implementation = PresenceView.class))))
    @GetMapping("/api/users/{userId}/presence")
    ResponseEntity<byte[]> presence(@Parameter(hidden = true) HttpServletRequest request, @PathVariable String userId) {
        String caller = ApiAuthentication.userId(request);
        if (InputGate.idProblem(userId, 1, MAX_USER_ID) != null) {
            throw ApiException.notFound();
        }
        boolean self = caller.equals(userId);
        boolean hidden = turns.run(() -> {
            if (!self && !repository.shareAChat(caller, userId)) {
                throw ApiException.notFound();
            }
            return repository.hidden(userId);
        });
        if (hidden && !self) {
            return Json.answer(HttpStatus.OK, new PresenceView(userId, "offline", null, null));
        }
        OnlineState.Known k = state.read(userId);
        String seen = k.seenMillis() == null ? null : Instant.ofEpochMilli(k.seenMillis()).toString();
        return Json.answer(HttpStatus.OK, new PresenceView(userId, k.state(), seen, self ? hidden : null));
    }

    @Operation(summary = "The caller's settings",
            responses = @ApiResponse(responseCode = "200", description = "the settings",
                    content = @Content(mediaType = "application/json", schema = @Schema(implementation = Settings.class))))
    @GetMapping("/api/me/settings")
    ResponseEntity<byte[]> settings(@Parameter(hidden = true) HttpServletRequest request) {
        String caller = ApiAuthentication.userId(request);
        boolean hidden = turns.run(() -> repository.hidden(caller));
        return Json.answer(HttpStatus.OK, new Settings(hidden ? "hidden" : "visible"));
    }

    @Operation(summary = "Change the caller's settings: presence hidden or visible",
            requestBody = @io.swagger.v3.oas.annotations.parameters.RequestBody(content = @Content(mediaType = "application/json",
                    schema = @Schema(example = "{\"presence\":\"hidden\"}"))),
            responses = @ApiResponse(responseCode = "200", description = "the settings now",
                    content = @Content(mediaType = "application/json", schema = @Schema(implementation = Settings.class))))
    @PutMapping("/api/me/settings")
    ResponseEntity<byte[]> change(@Parameter(hidden = true) HttpServletRequest request, @RequestBody(required = false) JsonNode body) {
        String caller = ApiAuthentication.userId(request);
        String presence = Json.string(body, "presence", 1, 16);
        if (!presence.equals("hidden") && !presence.equals("visible")) {
            throw ApiException.invalid("presence must be \"hidden\" or \"visible\"");
        }
        boolean hidden = presence.equals("hidden");
        turns.run(() -> {
            repository.setHidden(caller, hidden);
            return null;
        });
        // every PUT is announced, changed or not: of two racing PUTs, the one that commits last is
        // then also the last one pushed (the REST rate bounds how often)
        online.settingChanged(caller, hidden);
        return Json.answer(HttpStatus.OK, new Settings(presence));
    }
}
