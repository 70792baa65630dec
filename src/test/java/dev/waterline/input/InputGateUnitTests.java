package dev.waterline.input;

import java.util.List;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

class InputGateUnitTests {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Test
    void nulAndUnpairedSurrogatesAreNotTextButEverythingElseIs() {
        for (String bad : List.of("\u0000", "a\u0000b", "x\uD800y", "\uDC00", "\uD800", "\uDBFF\uDBFF\uDC00", "\uDC00\uD800")) {
            assertThat(InputGate.textProblem(bad)).as(bad.chars().boxed().toList().toString()).isNotNull();
        }
        for (String good : List.of("", "plain", "\uD83D\uDE00", "\uFFFF\uFFFE\uFDD0", "\u202Eright-to-left", "e\u0301",
                "tab\there", "line\nbreak", "\u0007bell", "\uDBFF\uDFFF", "\uE000private")) {
            assertThat(InputGate.textProblem(good)).as(good.chars().boxed().toList().toString()).isNull();
        }
    }

    @Test
    void idsAlsoRefuseControlCharactersAndKeepTheirLengthBounds() {
        assertThat(InputGate.idProblem("alice", 1, 128)).isNull();
        assertThat(InputGate.idProblem("ünï \uD83D\uDE00", 1, 128)).isNull();
        assertThat(InputGate.idProblem("", 1, 128)).contains("1-128");
        assertThat(InputGate.idProblem("a".repeat(129), 1, 128)).contains("1-128");
        for (String bad : List.of("a\u0000", "tab\t", "nl\n", "cr\r", "del\u007F", "c1\u0085", "c1\u009F", "x\uD800")) {
            assertThat(InputGate.idProblem(bad, 1, 128)).as(bad.chars().boxed().toList().toString()).isNotNull();
        }
    }

    @Test
    void aTreeIsRefusedForABadStringAtAnyDepthOrInAFieldName() {
        assertThat(InputGate.treeProblem(JSON.readTree("{\"a\":[1,{\"b\":\"ok\"}],\"c\":\"\\ud83d\\ude00\"}"))).isNull();
        assertThat(InputGate.treeProblem(JSON.readTree("{\"a\":[1,{\"b\":\"x\\u0000\"}]}"))).contains("U+0000");
        assertThat(InputGate.treeProblem(JSON.readTree("{\"a\":[\"\\ud800\"]}"))).contains("unpaired surrogate");
        assertThat(InputGate.treeProblem(JSON.readTree("{\"ty\\u0000pe\":\"send\"}"))).contains("field name");
    }

    @Test
    void abbreviatingNeverSplitsASurrogatePair() {
        String s = "a".repeat(63) + "\uD83D\uDE00" + "tail";
        String cut = InputGate.abbreviate(s, 64);
        assertThat(InputGate.textProblem(cut)).isNull();
        assertThat(cut).startsWith("a".repeat(63)).endsWith("…").doesNotContain("\uD83D");
    }

    @Test
    void printableReplacesWhatCouldNotBeWrittenAndKeepsPairs() {
        assertThat(InputGate.printable("a\u0000b\uD800c\uD83D\uDE00\u0007")).isEqualTo("a\uFFFDb\uFFFDc\uD83D\uDE00\uFFFD");
        assertThat(InputGate.printable("clean")).isEqualTo("clean");
    }
}
