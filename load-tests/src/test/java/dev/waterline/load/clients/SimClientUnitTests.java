package dev.waterline.load.clients;

import java.util.List;

import dev.waterline.load.chat.LoadRun;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.node.ObjectNode;

import static org.assertj.core.api.Assertions.assertThat;

/** The simulated client's per-message pieces: its send frame and what it remembers of a chat. */
class SimClientUnitTests {

    @Test
    void aSendFrameIsTheTextJacksonsTreeWritesForItWhateverItsStrings() {
        for (String s : List.of("", "u1-7", "x".repeat(100), "quote \" backslash \\ slash /", "\u0000\u001F\t\n\r",
                "\uD800 lone", "\uD83D\uDE00 pair", "é€ß", "\u2028\u2029")) {
            ObjectNode tree = LoadRun.JSON.createObjectNode();
            tree.put("type", "send").put("correlationId", s).put("chatId", "c-" + s).put("body", s + s);
            assertThat(SimClient.sendFrame(s, "c-" + s, s + s)).as(s).isEqualTo(tree.toString());
        }
    }

    @Test
    void aCursorHoldsAllUpToItsContiguousSeqAndResumesFromThatMessage() {
        SimClient.Cursor c = new SimClient.Cursor();
        assertThat(c.since()).isNull();
        c.add(2, "m2");
        c.add(3, "m3");
        assertThat(c.contiguous).isZero();
        assertThat(c.since()).isNull();
        c.add(1, "m1");
        assertThat(c.contiguous).isEqualTo(3);
        assertThat(c.since()).isEqualTo("m3");
        c.add(2, "m2");
        c.add(5, "m5");
        assertThat(c.contiguous).isEqualTo(3);
        c.add(4, "m4");
        assertThat(c.contiguous).isEqualTo(5);
        assertThat(c.since()).isEqualTo("m5");
        // only the resume point is kept of what lies behind it
        assertThat(c.bySeq).containsOnlyKeys(5L);
    }
}
