package dev.waterline.chat;

import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import com.github.f4b6a3.ulid.UlidCreator;
import dev.waterline.auth.ApiAuthentication;
import dev.waterline.web.ApiException;
import dev.waterline.web.Json;
import jakarta.servlet.http.HttpServletRequest;
import tools.jackson.databind.JsonNode;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** PROTOCOL.md §2: create, list, read and grow chats. */
@RestController
class ChatController {

    static final int MAX_USER_ID = 128;
    static final int MAX_TITLE = 200;

    private final ChatRepository chats;
    private final ChatProperties properties;

    ChatController(ChatRepository chats, ChatProperties properties) {
        this.chats = chats;
        this.properties = properties;
    }

    @PostMapping("/api/chats")
    ResponseEntity<Chat> create(HttpServletRequest request, @RequestBody(required = false) JsonNode body) {
        String caller = ApiAuthentication.userId(request);
        List<String> given = Json.strings(body, "members", MAX_USER_ID);
        String title = Json.optionalString(body, "title", MAX_TITLE);
        TreeSet<String> members = new TreeSet<>(given);
        members.add(caller);
        if (members.size() > properties.maxMembers()) {
            throw ApiException.invalid("a chat has at most " + properties.maxMembers() + " members");
        }
        String chatId = UlidCreator.getMonotonicUlid().toString();
        chats.create(chatId, title, List.copyOf(members));
        return ResponseEntity.status(HttpStatus.CREATED).body(new Chat(chatId, title, List.copyOf(members), 0, null));
    }

    @GetMapping("/api/chats")
    Map<String, List<Chat>> list(HttpServletRequest request) {
        return Map.of("chats", chats.chatsOf(ApiAuthentication.userId(request)));
    }

    @GetMapping("/api/chats/{chatId}")
    Chat get(HttpServletRequest request, @PathVariable String chatId) {
        Chat chat = chats.findForMember(chatId, ApiAuthentication.userId(request)).orElseThrow(ApiException::notFound);
        return chat.withReadSeq(chats.readSeqs(chatId));
    }

    @PostMapping("/api/chats/{chatId}/members")
    Chat addMember(HttpServletRequest request, @PathVariable String chatId, @RequestBody(required = false) JsonNode body) {
        String caller = ApiAuthentication.userId(request);
        String userId = Json.string(body, "userId", 1, MAX_USER_ID);
        try {
            if (!chats.addMember(chatId, caller, userId, properties.maxMembers())) {
                throw ApiException.notFound();
            }
        }
        catch (ChatRepository.TooManyMembers e) {
            throw ApiException.invalid("a chat has at most " + properties.maxMembers() + " members");
        }
        return chats.findForMember(chatId, caller).orElseThrow(ApiException::notFound);
    }
}
