package dev.waterline.chat;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The last message's body as a chat list carries it: at most 200 UTF-16 code units, never half a pair. */
class ChatPreviewUnitTests {

    @Test
    void aShortBodyIsKeptWhole() {
        assertThat(Chat.preview("hello", 200)).isEqualTo("hello");
        assertThat(Chat.preview("", 200)).isEmpty();
        assertThat(Chat.preview("x".repeat(200), 200)).hasSize(200);
    }

    @Test
    void aLongBodyIsCutToTheLimitInCodeUnits() {
        assertThat(Chat.preview("é".repeat(300), 200)).isEqualTo("é".repeat(200));
    }

    @Test
    void aCutNeverSeparatesTheTwoHalvesOfASurrogatePair() {
        String body = "x".repeat(199) + "😀" + "tail";

        String cut = Chat.preview(body, 200);

        assertThat(cut).isEqualTo("x".repeat(199));
        assertThat(Chat.preview("x".repeat(198) + "😀" + "tail", 200)).isEqualTo("x".repeat(198) + "😀");
    }
}
