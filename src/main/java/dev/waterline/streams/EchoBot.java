package dev.waterline.streams;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.waterline.auth.ApiAuthentication;
import dev.waterline.chat.ChatProperties;
import dev.waterline.chat.ChatRepository;
import dev.waterline.lifecycle.Loops;
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
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.JsonNode;

/**
 * {@code POST /api/dev/bots/echo {"chatId"}} (zero-configuration mode only, {@code 404} otherwise):
 * the user {@value #BOT} joins the caller's chat, opens a stream in it and writes a canned reply
 * into it a word at a time ({@value #WORD_MILLIS} ms apart), then completes it, so that a person can
 * watch a stream (live, by SSE, or replayed) without writing a producer. The bot is an ordinary
 * producer: its appends go through the appender like anyone's.
 */
@RestController
class EchoBot {

    static final String BOT = "echo-bot";
    static final long WORD_MILLIS = 80;
    static final String REPLY = "Hello from the echo bot. This reply is a durable stream: every word is a chunk, committed to"
            + " PostgreSQL before anyone sees it, fanned out live to everyone watching, and replayed in order to whoever"
            + " comes late or reloads the page. Subscribe from any seq and you get the rest exactly once.";

    private final StreamProperties properties;
    private final ChatRepository chats;
    private final ChatProperties chatLimits;
    private final Streams streams;
    private final StreamRepository store;
    private final DatabaseTurns turns;
    private final Loops loops;
    private final Answers answers;

    EchoBot(StreamProperties properties, ChatRepository chats, ChatProperties chatLimits, Streams streams, StreamRepository store,
            DatabaseTurns turns, Loops loops, Answers answers) {
        this.properties = properties;
        this.chats = chats;
        this.chatLimits = chatLimits;
        this.streams = streams;
        this.store = store;
        this.turns = turns;
        this.loops = loops;
        this.answers = answers;
        loops.declare("echo_bot");
    }

    @Operation(summary = "Dev only: the echo bot joins the chat and streams a canned reply into it, word by word",
            requestBody = @io.swagger.v3.oas.annotations.parameters.RequestBody(content = @Content(mediaType = "application/json",
                    schema = @Schema(example = "{\"chatId\":\"…\"}"))),
            responses = {
                    @ApiResponse(responseCode = "201", description = "the stream the bot is writing",
                            content = @Content(mediaType = "application/json", schema = @Schema(implementation = StreamView.class))),
                    @ApiResponse(responseCode = "404", description = "dev bots are off, or no such chat")})
    @PostMapping("/api/dev/bots/echo")
    ResponseEntity<byte[]> echo(@Parameter(hidden = true) HttpServletRequest request, @RequestBody(required = false) JsonNode body) {
        if (!properties.devBots()) {
            throw new ApiException(HttpStatus.NOT_FOUND, "not_found", "dev bots are off (zero-configuration mode only)");
        }
        String caller = ApiAuthentication.userId(request);
        String chatId = Json.id(body, "chatId", 128);
        turns.run(() -> {
            try {
                if (!chats.addMember(chatId, caller, BOT, chatLimits.maxMembers(), chatLimits.quota())) {
                    throw ApiException.notFound();
                }
            }
            catch (ChatRepository.TooManyMembers e) {
                throw ApiException.invalid("the chat is full: the bot cannot join");
            }
            catch (ChatRepository.OverQuota e) {
                throw new ApiException(HttpStatus.TOO_MANY_REQUESTS, "rate_limited", "the bot belongs to too many chats", 60);
            }
            return null;
        });
        Object opened = await(streams.open(BOT, chatId, "echo", null));
        if (opened instanceof Refusal r) {
            return StreamController.refusal(r);
        }
        StreamView stream = turns.run(() -> store.byMessage((String) opened).orElseThrow(ApiException::notFound));
        Thread.ofVirtual().name("echo-bot").start(() -> loops.pass("echo_bot", () -> write(stream.streamId())));
        return Json.answer(HttpStatus.CREATED, stream);
    }

    /** Writes the reply a word at a time, then completes the stream (aborts it if an append is refused). */
    private void write(String streamId) {
        List<String> words = new ArrayList<>(List.of(REPLY.split(" ")));
        long seq = 0;
        for (int i = 0; i < words.size(); i++) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(WORD_MILLIS));
            String word = words.get(i) + (i + 1 < words.size() ? " " : "");
            CompletableFuture<Object> done = new CompletableFuture<>();
            streams.submit(AppendRequest.append(streamId, BOT, List.of(new NewChunk(seq + 1, word, null)), Streams.future(done)));
            if (await(done) instanceof Refusal r) {
                streams.submit(AppendRequest.abort(streamId, BOT, "the echo bot's append was refused: " + r.code(),
                        Streams.future(new CompletableFuture<>())));
                return;
            }
            seq++;
        }
        streams.submit(AppendRequest.complete(streamId, BOT, seq, Streams.future(new CompletableFuture<>())));
    }

    /** The answer, or {@code unavailable} when none came in time (counted and logged, throttled). */
    private Object await(CompletableFuture<Object> f) {
        return answers.awaitForBot(f);
    }
}
