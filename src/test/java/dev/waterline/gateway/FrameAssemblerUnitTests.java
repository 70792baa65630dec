package dev.waterline.gateway;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Frames that arrive in parts: put together in order, a whole frame passed through as it is; a
 * frame past the limit (UTF-8 bytes, not characters) refused, and the rest of its parts dropped
 * unread, never taken for a frame of their own; binary frames counted the same way.
 */
class FrameAssemblerUnitTests {

    @Test
    void aWholeFrameIsPassedThrough() {
        assertThat(new FrameAssembler().text("{\"type\":\"ping\"}", true, 64)).isEqualTo("{\"type\":\"ping\"}");
    }

    @Test
    void partsArePutTogetherInOrder() {
        FrameAssembler assembler = new FrameAssembler();

        assertThat(assembler.text("{\"type\"", false, 64)).isNull();
        assertThat(assembler.text(":\"pi", false, 64)).isNull();
        assertThat(assembler.text("ng\"}", true, 64)).isEqualTo("{\"type\":\"ping\"}");
        assertThat(assembler.text("{}", true, 64)).as("the next frame starts afresh").isEqualTo("{}");
    }

    @Test
    void theLimitIsInUtf8Bytes() {
        FrameAssembler assembler = new FrameAssembler();
        assembler.text("éé", false, 6);   // 4 bytes

        assertThatThrownBy(() -> assembler.text("éé", true, 6)).isInstanceOf(FrameAssembler.FrameTooLarge.class);
    }

    @Test
    void theRestOfARefusedFrameIsDroppedUnread() {
        FrameAssembler assembler = new FrameAssembler();
        assembler.text("0123456789", false, 12);

        assertThatThrownBy(() -> assembler.text("0123456789", false, 12)).isInstanceOf(FrameAssembler.FrameTooLarge.class);
        assertThat(assembler.text("{\"type\":\"send\"", false, 12)).isNull();
        assertThat(assembler.text("}", true, 12)).as("the refused frame's last part").isNull();
        assertThat(assembler.text("{}", true, 12)).as("the next frame").isEqualTo("{}");
    }

    @Test
    void binaryFramesAreCountedAndRefusedPastTheLimit() {
        FrameAssembler assembler = new FrameAssembler();

        assertThat(assembler.binary(5, false, 8)).isFalse();
        assertThat(assembler.binary(3, true, 8)).isTrue();
        assertThat(assembler.binary(6, false, 8)).isFalse();
        assertThatThrownBy(() -> assembler.binary(6, false, 8)).isInstanceOf(FrameAssembler.FrameTooLarge.class);
        assertThat(assembler.binary(100, true, 8)).as("the refused frame's last part").isFalse();
        assertThat(assembler.binary(8, true, 8)).isTrue();
    }
}
