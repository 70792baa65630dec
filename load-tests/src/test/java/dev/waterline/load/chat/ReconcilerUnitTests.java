package dev.waterline.load.chat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The reconciliation cases of {@code load-tests/reconcile-cases.json}, which the JavaScript
 * client's harness ({@code clients/js/bench/reconcile.js}) is held to as well: both generators
 * judge a run by the same rules, so their verdicts can be compared.
 */
class ReconcilerUnitTests {

    /** From the repository's root (the server's test suite) or from load-tests/ (its own build). */
    static final Path CASES = Files.exists(Path.of("load-tests/reconcile-cases.json"))
            ? Path.of("load-tests/reconcile-cases.json") : Path.of("reconcile-cases.json");

    static Stream<Arguments> cases() throws Exception {
        JsonNode root = JsonMapper.builder().build().readTree(Files.readString(CASES));
        List<Arguments> out = new ArrayList<>();
        for (JsonNode c : root.get("cases")) {
            out.add(Arguments.of(Named.of(c.get("name").asString(), c)));
        }
        assertThat(out).as("cases in " + CASES).hasSizeGreaterThanOrEqualTo(4);
        return out.stream();
    }

    @ParameterizedTest
    @MethodSource("cases")
    void eachSharedCaseGetsItsVerdict(JsonNode c) {
        List<Reconciler.Accepted> accepted = new ArrayList<>();
        for (JsonNode a : c.get("accepted")) {
            accepted.add(new Reconciler.Accepted(a.get("messageId").asString(), a.get("chatId").asString(),
                    a.get("senderId").asString(), strings(a.get("recipients"))));
        }
        Reconciler.Verdict v = Reconciler.reconcile(accepted, sets(c.get("history")), sets(c.get("held")), counts(c.get("received")));
        JsonNode expect = c.get("expect");
        List<Reconciler.Loss> lost = new ArrayList<>();
        for (JsonNode l : expect.get("lost")) {
            lost.add(new Reconciler.Loss(l.get("messageId").asString(), l.get("chatId").asString(),
                    l.get("missingFrom").asString(), l.get("guarantee").asString()));
        }
        assertThat(v.accepted()).isEqualTo(expect.get("accepted").asInt());
        assertThat(v.expectedDeliveries()).isEqualTo(expect.get("expectedDeliveries").asInt());
        assertThat(v.duplicatesSeen()).isEqualTo(expect.get("duplicatesSeen").asLong());
        assertThat(v.lost()).containsExactlyElementsOf(lost);
        assertThat(v.clean()).isEqualTo(lost.isEmpty());
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asString()));
        return out;
    }

    private static Map<String, Set<String>> sets(JsonNode object) {
        Map<String, Set<String>> out = new HashMap<>();
        object.properties().forEach(e -> out.put(e.getKey(), new HashSet<>(strings(e.getValue()))));
        return out;
    }

    private static Map<String, Map<String, Integer>> counts(JsonNode object) {
        Map<String, Map<String, Integer>> out = new HashMap<>();
        object.properties().forEach(e -> {
            Map<String, Integer> m = new HashMap<>();
            e.getValue().properties().forEach(x -> m.put(x.getKey(), x.getValue().asInt()));
            out.put(e.getKey(), m);
        });
        return out;
    }
}
