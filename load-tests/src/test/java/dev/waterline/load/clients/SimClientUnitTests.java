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

    @Test
    void entryFramesAreTheJsonOfPROTOCOLsEditDeleteAndReactFrames() {
        var edit = LoadRun.JSON.readTree(SimClient.entryFrame("edit", "u1-\"9", "c-1", "01J0ABC", "\"body\":\"new \\\" text\""));
        assertThat(edit.get("type").asString()).isEqualTo("edit");
        assertThat(edit.get("correlationId").asString()).isEqualTo("u1-\"9");
        assertThat(edit.get("chatId").asString()).isEqualTo("c-1");
        assertThat(edit.get("messageId").asString()).isEqualTo("01J0ABC");
        assertThat(edit.get("body").asString()).isEqualTo("new \" text");
        var delete = LoadRun.JSON.readTree(SimClient.entryFrame("delete", "u1-10", "c-1", "01J0ABC", null));
        assertThat(delete.propertyNames()).containsExactly("type", "correlationId", "chatId", "messageId");
        var react = LoadRun.JSON.readTree(SimClient.entryFrame("react", "u1-11", "c-1", "01J0ABC",
                "\"emoji\":\"" + SimClient.EMOJI.getFirst() + "\",\"on\":false"));
        assertThat(react.get("emoji").asString()).isEqualTo("\uD83D\uDC4D");
        assertThat(react.get("on").asBoolean()).isFalse();
    }

    @Test
    void anEditsBodyIsUniqueToItAndAsLongAsThePayload() {
        assertThat(SimClient.editBody("u1-9", 100)).startsWith("edit u1-9 ").hasSize(100);
        assertThat(SimClient.editBody("u1-9", 3)).isEqualTo("edit u1-9");
        assertThat(SimClient.editBody("u1-9", 100)).isNotEqualTo(SimClient.editBody("u1-10", 100));
    }

    @Test
    void theTargetsOfAChatKeepTheLatestAndLoseADeletedOne() {
        SimClient.Targets t = new SimClient.Targets();
        java.util.Random r = new java.util.Random(3);
        assertThat(t.pick(r)).isNull();
        for (int i = 0; i < SimClient.Targets.CAP + 10; i++) {
            t.add("m" + i);
        }
        assertThat(t.size()).isEqualTo(SimClient.Targets.CAP);
        t.remove("m20");
        t.remove("m3");   // long gone: nothing changes
        assertThat(t.size()).isEqualTo(SimClient.Targets.CAP - 1);
        java.util.Set<String> picked = new java.util.HashSet<>();
        for (int i = 0; i < 5_000; i++) {
            picked.add(t.pick(r));
        }
        assertThat(picked).hasSize(SimClient.Targets.CAP - 1).doesNotContain("m20", "m0", "m9").contains("m10", "m73");
    }
}
