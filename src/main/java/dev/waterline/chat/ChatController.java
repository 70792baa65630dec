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
import jakarta.servlet.http.HttpServletRequest;
import tools.jackson.databind.JsonNode;
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
    private final ChatProperties properties;
    private final DatabaseTurns turns;
    private final long pageBytes;

    ChatController(ChatRepository chats, ChatProperties properties, DatabaseTurns turns, ApiProperties api) {
        this.chats = chats;
        this.properties = properties;
        this.turns = turns;
        this.pageBytes = api.maxPageBytes().toBytes();
    }

    @PostMapping("/api/chats")
    ResponseEntity<byte[]> create(HttpServletRequest request, @RequestBody(required = false) JsonNode body) {
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
                chats.create(chatId, title, List.copyOf(members), properties.maxChatsPerUser());
            }
            catch (ChatRepository.OverQuota e) {
                throw overQuota();
            }
            return Json.answer(HttpStatus.CREATED, new Chat(chatId, title, List.copyOf(members), 0, null));
        });
    }

    record ChatPage(List<Chat> chats, String next) {
    }

    @GetMapping("/api/chats")
    ResponseEntity<byte[]> list(HttpServletRequest request, @RequestParam(required = false) String limit,
                                @RequestParam(required = false) String after) {
        int pageSize = parseLimit(limit);
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

    @GetMapping("/api/chats/{chatId}")
    ResponseEntity<byte[]> get(HttpServletRequest request, @PathVariable String chatId) {
        String user = ApiAuthentication.userId(request);
        return turns.run(() -> {
            Chat chat = chats.findForMember(chatId, user).orElseThrow(ApiException::notFound);
            return Json.answer(HttpStatus.OK, chat.withReadSeq(chats.readSeqs(chatId)));
        });
    }

    @PostMapping("/api/chats/{chatId}/members")
    ResponseEntity<byte[]> addMember(HttpServletRequest request, @PathVariable String chatId,
                                     @RequestBody(required = false) JsonNode body) {
        String caller = ApiAuthentication.userId(request);
        String userId = Json.id(body, "userId", MAX_USER_ID);
        return turns.run(() -> {
            try {
                if (!chats.addMember(chatId, caller, userId, properties.maxMembers(), properties.maxChatsPerUser())) {
                    throw ApiException.notFound();
                }
            }
            catch (ChatRepository.TooManyMembers e) {
                throw ApiException.invalid("a chat has at most " + properties.maxMembers() + " members");
            }
            catch (ChatRepository.OverQuota e) {
                throw overQuota();
            }
            return Json.answer(HttpStatus.OK, chats.findForMember(chatId, caller).orElseThrow(ApiException::notFound));
        });
    }

    private ApiException overQuota() {
        // Retry-After as PROTOCOL.md §2 asks of every 429; a quota frees up only when chats are left.
        return new ApiException(HttpStatus.TOO_MANY_REQUESTS, "rate_limited",
                "a member would belong to more than " + properties.maxChatsPerUser() + " chats", 60);
    }

    private static int parseLimit(String limit) {
        if (limit == null) {
            return DEFAULT_PAGE;
        }
        try {
            int n = Integer.parseInt(limit.strip());
            if (n >= 1 && n <= MAX_PAGE) {
                return n;
            }
        }
        catch (NumberFormatException e) {
            // falls through to the error below
        }
        throw ApiException.invalid("limit must be an integer from 1 to " + MAX_PAGE);
    }
}
