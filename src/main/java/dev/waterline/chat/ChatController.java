package dev.waterline.chat;

import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import com.github.f4b6a3.ulid.UlidCreator;
import dev.waterline.auth.ApiAuthentication;
import dev.waterline.input.InputGate;
import dev.waterline.web.ApiException;
import dev.waterline.web.ApiProperties;
import dev.waterline.web.DatabaseTurns;
import dev.waterline.web.Json;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import jakarta.servlet.http.HttpServletRequest;
import tools.jackson.databind.JsonNode;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * PROTOCOL.md §2: create, list (a page at a time), read and grow chats. Every call takes one of
 * the bounded turns at PostgreSQL ({@link DatabaseTurns}) for its queries and the building of its
 * answer; creating or joining a chat counts against the membership quota
 * ({@code waterline.chats.max-chats-per-user}, {@code 429} past it).
 */
@RestController
class ChatController {

    static final int MAX_USER_ID = 128;
    static final int MAX_TITLE = 200;
    static final int DEFAULT_PAGE = 100;
    static final int MAX_PAGE = 500;

    private final ChatRepository chats;
    private final ApplicationEventPublisher events;
    private final ChatProperties properties;
    private final DatabaseTurns turns;
    private final long pageBytes;

    ChatController(ChatRepository chats, ChatProperties properties, DatabaseTurns turns, ApiProperties api,
                   ApplicationEventPublisher events) {
        this.events = events;
        this.chats = chats;
        this.properties = properties;
        this.turns = turns;
        this.pageBytes = api.maxPageBytes().toBytes();
    }

    @Operation(summary = "Create a chat; the caller is always a member",
            requestBody = @io.swagger.v3.oas.annotations.parameters.RequestBody(content = @Content(mediaType = "application/json",
                    schema = @Schema(example = "{\"members\":[\"bob\"],\"title\":\"plans\"}"))),
            responses = @ApiResponse(responseCode = "201", description = "the chat",
                    content = @Content(mediaType = "application/json", schema = @Schema(implementation = Chat.class))))
    @PostMapping("/api/chats")
    ResponseEntity<byte[]> create(@Parameter(hidden = true) HttpServletRequest request, @RequestBody(required = false) JsonNode body) {
        String caller = ApiAuthentication.userId(request);
        List<String> given = Json.ids(body, "members", MAX_USER_ID);
        String title = Json.optionalString(body, "title", MAX_TITLE);
        TreeSet<String> members = new TreeSet<>(given);
        members.add(caller);
        if (members.size() > properties.maxMembers()) {
            throw ApiException.invalid("a chat has at most " + properties.maxMembers() + " members");
        }
        String chatId = UlidCreator.getMonotonicUlid().toString();
        return turns.run(() -> {
            try {
                chats.create(chatId, title, caller, List.copyOf(members), properties.quota());
            }
            catch (ChatRepository.OverQuota e) {
                throw overQuota();
            }
            events.publishEvent(new MembersJoined(chatId, List.copyOf(members)));
            return Json.answer(HttpStatus.CREATED, Chat.created(chatId, title, List.copyOf(members)));
        });
    }

    /** A page of the caller's chats. */
    record ChatPage(List<Chat> chats, String next) {
    }

    @Operation(summary = "The caller's chats, a page at a time, in creation order",
            responses = @ApiResponse(responseCode = "200", description = "a page; next is the cursor of the next page, null on the last",
                    content = @Content(mediaType = "application/json", schema = @Schema(implementation = ChatPage.class))))
    @GetMapping("/api/chats")
    ResponseEntity<byte[]> list(@Parameter(hidden = true) HttpServletRequest request, @RequestParam(required = false) String limit,
                                @RequestParam(required = false) String after) {
        int pageSize = Json.limit(limit, DEFAULT_PAGE, MAX_PAGE);
        if (after != null && InputGate.idProblem(after, 1, MAX_USER_ID) != null) {
            throw ApiException.invalid("after must be the next cursor of an earlier page");
        }
        String user = ApiAuthentication.userId(request);
        return turns.run(() -> {
            ChatRepository.Page page = chats.chatsOf(user, after, pageSize, pageBytes);
            String next = page.more() && !page.chats().isEmpty() ? page.chats().getLast().chatId() : null;
            return Json.answer(HttpStatus.OK, new ChatPage(page.chats(), next));
        });
    }

    @Operation(summary = "One chat, with each member's read receipt",
            responses = @ApiResponse(responseCode = "200", description = "the chat",
                    content = @Content(mediaType = "application/json", schema = @Schema(implementation = Chat.class))))
    @GetMapping("/api/chats/{chatId}")
    ResponseEntity<byte[]> get(@Parameter(hidden = true) HttpServletRequest request, @PathVariable String chatId) {
        String user = ApiAuthentication.userId(request);
        return turns.run(() -> {
            Chat chat = chats.findForMember(chatId, user).orElseThrow(ApiException::notFound);
            return Json.answer(HttpStatus.OK, chat.withReadSeq(chats.readSeqs(chatId)));
        });
    }

    @Operation(summary = "Add a member (members only)",
            requestBody = @io.swagger.v3.oas.annotations.parameters.RequestBody(content = @Content(mediaType = "application/json",
                    schema = @Schema(example = "{\"userId\":\"dave\"}"))),
            responses = @ApiResponse(responseCode = "200", description = "the chat",
                    content = @Content(mediaType = "application/json", schema = @Schema(implementation = Chat.class))))
    @PostMapping("/api/chats/{chatId}/members")
    ResponseEntity<byte[]> addMember(@Parameter(hidden = true) HttpServletRequest request, @PathVariable String chatId,
                                     @RequestBody(required = false) JsonNode body) {
        String caller = ApiAuthentication.userId(request);
        String userId = Json.id(body, "userId", MAX_USER_ID);
        return turns.run(() -> {
            try {
                if (!chats.addMember(chatId, caller, userId, properties.maxMembers(), properties.quota())) {
                    throw ApiException.notFound();
                }
            }
            catch (ChatRepository.TooManyMembers e) {
                throw ApiException.invalid("a chat has at most " + properties.maxMembers() + " members");
            }
            catch (ChatRepository.OverQuota e) {
                throw overQuota();
            }
            events.publishEvent(new MembersJoined(chatId, List.of(userId)));
            return Json.answer(HttpStatus.OK, chats.findForMember(chatId, caller).orElseThrow(ApiException::notFound));
        });
    }

    private ApiException overQuota() {
        // Retry-After as PROTOCOL.md §2 asks of every 429; a quota frees up only when chats are left.
        return new ApiException(HttpStatus.TOO_MANY_REQUESTS, "rate_limited",
                "a member would belong to more than " + properties.maxChatsPerUser() + " chats, or to more than "
                        + properties.maxChatsAddedByOthers() + " that others added them to", 60);
    }
}
