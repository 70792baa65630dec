package dev.waterline.session;

import java.util.Map;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

class FramesUnitTests {

    final JsonMapper json = JsonMapper.builder().build();

    @Test
    void aMessageFrameCarriesEveryFieldOfTheContractWithANumericDeliveryId() {
        JsonNode f = json.readTree(Frames.message(42, "01J", "c-1", "chat", 7, "alice", "hi \"there\"\n", "2026-01-01T00:00:00Z",
                "text", null));
        assertThat(f.get("type").asString()).isEqualTo("message");
        assertThat(f.get("deliveryId").isIntegralNumber()).isTrue();
        assertThat(f.get("deliveryId").asLong()).isEqualTo(42);
        assertThat(f.get("seq").isIntegralNumber()).isTrue();
        assertThat(f.get("body").asString()).isEqualTo("hi \"there\"\n");
        assertThat(f.propertyNames()).containsExactlyInAnyOrder(
                "type", "deliveryId", "messageId", "correlationId", "chatId", "seq", "senderId", "body", "sentAt", "kind");
        assertThat(f.get("kind").asString()).isEqualTo("text");
    }

    @Test
    void aStreamsOpeningMessageCarriesItsKindAndStreamId() {
        JsonNode f = json.readTree(Frames.message(43, "01K", "stream-1", "chat", 8, "bot", "", "2026-01-01T00:00:00Z",
                "stream", dev.waterline.commit.EntryFields.stream("01S")));
        assertThat(f.get("kind").asString()).isEqualTo("stream");
        assertThat(f.get("streamId").asString()).isEqualTo("01S");
    }

    @Test
    void anEntrysFieldsFollowItsKindAsJsonMembers() {
        String fields = dev.waterline.commit.EntryFields.of().with("targetId", "01T").with("emoji", "\uD83D\uDC4D\"}")
                .with("on", true).members();
        JsonNode f = json.readTree(Frames.message(44, "01K", "c", "chat", 9, "bob", "", "2026-01-01T00:00:00Z", "reaction", fields));
        assertThat(f.get("kind").asString()).isEqualTo("reaction");
        assertThat(f.get("targetId").asString()).isEqualTo("01T");
        assertThat(f.get("emoji").asString()).isEqualTo("\uD83D\uDC4D\"}");
        assertThat(f.get("on").asBoolean()).isTrue();
        assertThat(json.readTree(Frames.accepted("c", "m", "chat", 1, "t", true)).get("unchanged").asBoolean()).isTrue();
        assertThat(json.readTree(Frames.accepted("c", "m", "chat", 1, "t")).has("unchanged")).isFalse();
    }

    @Test
    void anErrorCarriesItsCorrelationIdOnlyWhenItAnswersASend() {
        assertThat(json.readTree(Frames.error("invalid", "bad", null)).has("correlationId")).isFalse();
        assertThat(json.readTree(Frames.error("too_large", "long", "c-9")).get("correlationId").asString()).isEqualTo("c-9");
    }

    @Test
    void acceptedWelcomeReadAndPongHaveTheirTypes() {
        assertThat(json.readTree(Frames.accepted("c", "m", "chat", 1, "t")).get("type").asString()).isEqualTo("accepted");
        assertThat(json.readTree(Frames.welcome("u", "s", Map.of("maxBodyChars", 4000))).get("limits").get("maxBodyChars").asInt()).isEqualTo(4000);
        assertThat(json.readTree(Frames.read("chat", "u", 3)).get("seq").asLong()).isEqualTo(3);
        assertThat(json.readTree(Frames.pong()).get("type").asString()).isEqualTo("pong");
    }

    /** Strings a client may send (ids are checked before they reach a frame; bodies and text are not). */
    static final java.util.List<String> AWKWARD = java.util.List.of("", "plain", "hi \"there\"\n", "\\", "/", "\u0000", "\u001F",
            "\u007F", "\t\r\n", "\uD800", "\uDFFF", "\uDE00\uD83D", "\uD83D\uDE00", "\u2028\u2029", "\uFEFF\u202E", "\uFFFF",
            "é€ß", "<script>&amp;</script>", "x".repeat(5000));

    @Test
    void acceptedAndMessageFramesAreWrittenExactlyAsTheMapperWritesTheirRecords() {
        JsonMapper mapper = JsonMapper.builder().build();
        for (String a : AWKWARD) {
            for (String b : java.util.List.of("01J", a)) {
                assertThat(Frames.accepted(a, b, a, 7, b)).as(a)
                        .isEqualTo(mapper.writeValueAsString(new Frames.Accepted("accepted", a, b, a, 7, b)));
                assertThat(Frames.message(Long.MAX_VALUE, b, a, a, 1, b, a, b, "text", null)).as(a)
                        .isEqualTo(mapper.writeValueAsString(new Frames.Message("message", Long.MAX_VALUE, b, a, a, 1, b, a, b, "text", null)));
                assertThat(Frames.message(0, b, a, b, 9, a, a, b, "stream", dev.waterline.commit.EntryFields.stream(b))).as(a)
                        .isEqualTo(mapper.writeValueAsString(new Frames.Message("message", 0, b, a, b, 9, a, a, b, "stream", b)));
            }
        }
        // absent values as the mapper writes them: null for accepted's fields, no streamId, kind "text"
        assertThat(Frames.accepted(null, "m", "c", 1, null))
                .isEqualTo(mapper.writeValueAsString(new Frames.Accepted("accepted", null, "m", "c", 1, null)));
        assertThat(Frames.message(1, "m", null, "c", 1, "s", null, "t", null, null))
                .isEqualTo(mapper.writeValueAsString(new Frames.Message("message", 1, "m", null, "c", 1, "s", null, "t", "text", null)));
    }

    @Test
    void utf8LengthCountsBytesAsTheEncoderWouldForEveryKindOfCharacter() {
        for (String s : java.util.List.of("", "plain ascii", "é and ß", "€ three bytes", "\uD83D\uDE00 a surrogate pair", "mixed é€\uD83D\uDE00x")) {
            org.assertj.core.api.Assertions.assertThat(Frames.utf8Length(s)).as(s)
                    .isEqualTo(s.getBytes(java.nio.charset.StandardCharsets.UTF_8).length);
        }
    }
}
