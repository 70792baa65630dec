package dev.waterline.architecture;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every Lua script names every key it touches in {@code KEYS} (Redis Cluster routes a script by
 * its KEYS and forbids keys computed inside it): each key argument of a {@code redis.call} or
 * {@code redis.pcall} is a {@code KEYS[n]} reference, a local assigned only from such references
 * (a variable, a loop over a table of them), or a parameter of a local function that every call of
 * it, in the scripts of the same directory (a prelude such as {@code _repin.lua} included), passes
 * one. The key arguments: the first after the command, every one for {@code DEL}, {@code EXISTS},
 * {@code UNLINK}, {@code TOUCH} and {@code MGET}, none for {@code TIME}. A planted script in test
 * resources proves the check fires.
 */
class LuaKeysUnitTests {

    static final Path MAIN = Path.of("src/main/resources");
    static final Path PLANTED = Path.of("src/test/resources/lua-planted");

    static final Set<String> ALL_KEYS = Set.of("DEL", "EXISTS", "UNLINK", "TOUCH", "MGET");
    static final Set<String> NO_KEY = Set.of("TIME");
    static final Pattern KEYS_REF = Pattern.compile("KEYS\\[[^\\[\\]]+]");
    static final Pattern CALL = Pattern.compile("redis\\.p?call\\s*\\(");
    static final Pattern ASSIGN = Pattern.compile("(?m)^\\s*(?:local\\s+)?([A-Za-z_][A-Za-z0-9_]*)\\s*=\\s*(?!=)(.+)$");
    static final Pattern FOR_IPAIRS = Pattern.compile("for\\s+[A-Za-z_][A-Za-z0-9_]*\\s*,\\s*([A-Za-z_][A-Za-z0-9_]*)\\s+in\\s+ipairs\\s*\\(\\s*\\{([^}]*)}\\s*\\)");
    static final Pattern FUNCTION = Pattern.compile("function\\s+([A-Za-z_][A-Za-z0-9_]*)\\s*\\(([^)]*)\\)");

    @Test
    void everyScriptNamesEveryKeyItTouchesInKeys() throws IOException {
        List<Path> scripts = scripts(MAIN);
        assertThat(scripts).as("scripts found").anySatisfy(p -> assertThat(p.toString()).endsWith("watermark/disconnect.lua"));

        assertThat(violations(MAIN)).isEmpty();
    }

    @Test
    void theCheckFiresOnAPlantedScriptThatComputesItsKeys() throws IOException {
        List<String> found = violations(PLANTED);

        assertThat(found).as("a key built from ARGV").anySatisfy(v -> assertThat(v).contains("'SET', 'wl:dead:' .. ARGV[1]"));
        assertThat(found).as("a local built from ARGV").anySatisfy(v -> assertThat(v).contains("DEL").contains("trust"));
        assertThat(found).as("a local assigned from KEYS and then from ARGV").anySatisfy(v -> assertThat(v).contains("mixed"));
        assertThat(found).as("a function parameter one of whose calls passes a computed name").anySatisfy(v -> assertThat(v).contains("'DEL', key"));
        assertThat(found).as("the KEYS-only calls pass").noneSatisfy(v -> assertThat(v).contains("ZSCORE"));
    }

    static List<Path> scripts(Path root) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(p -> p.toString().endsWith(".lua")).sorted().toList();
        }
    }

    /** Every key argument, in every script under {@code root}, that is not a KEYS reference: "file: call". */
    static List<String> violations(Path root) throws IOException {
        Map<Path, List<Path>> byDirectory = new HashMap<>();
        for (Path p : scripts(root)) {
            byDirectory.computeIfAbsent(p.getParent(), d -> new ArrayList<>()).add(p);
        }
        List<String> out = new ArrayList<>();
        for (List<Path> directory : byDirectory.values()) {
            Map<Path, String> code = new HashMap<>();
            for (Path p : directory) {
                code.put(p, withoutComments(Files.readString(p)));
            }
            Set<String> boundParameters = boundParameters(code.values());
            for (Path p : directory) {
                String text = code.get(p);
                Set<String> bound = new HashSet<>(boundLocals(text));
                bound.addAll(boundParameters);
                for (String call : calls(text, CALL)) {
                    if (!keysNamed(call, bound)) {
                        out.add(root.relativize(p) + ": redis.call(" + call + ")");
                    }
                }
            }
        }
        return out;
    }

    static String withoutComments(String lua) {
        return lua.replaceAll("(?s)--\\[\\[.*?]]", "").replaceAll("--[^\\n]*", "");
    }

    /** The argument lists of every call {@code opening} finds (the text between its parentheses). */
    static List<String> calls(String text, Pattern opening) {
        List<String> out = new ArrayList<>();
        Matcher m = opening.matcher(text);
        while (m.find()) {
            int depth = 1;
            int i = m.end();
            char quote = 0;
            for (; i < text.length() && depth > 0; i++) {
                char c = text.charAt(i);
                if (quote != 0) {
                    if (c == quote) {
                        quote = 0;
                    }
                }
                else if (c == '\'' || c == '"') {
                    quote = c;
                }
                else if (c == '(') {
                    depth++;
                }
                else if (c == ')') {
                    depth--;
                }
            }
            out.add(text.substring(m.end(), i - 1));
        }
        return out;
    }

    /** Top-level comma-separated arguments. */
    static List<String> arguments(String call) {
        List<String> out = new ArrayList<>();
        int depth = 0;
        char quote = 0;
        int start = 0;
        for (int i = 0; i < call.length(); i++) {
            char c = call.charAt(i);
            if (quote != 0) {
                if (c == quote) {
                    quote = 0;
                }
            }
            else if (c == '\'' || c == '"') {
                quote = c;
            }
            else if (c == '(' || c == '{' || c == '[') {
                depth++;
            }
            else if (c == ')' || c == '}' || c == ']') {
                depth--;
            }
            else if (c == ',' && depth == 0) {
                out.add(call.substring(start, i).trim());
                start = i + 1;
            }
        }
        if (!call.isBlank()) {
            out.add(call.substring(start).trim());
        }
        return out;
    }

    static boolean isKey(String argument, Set<String> bound) {
        return KEYS_REF.matcher(argument).matches() || bound.contains(argument);
    }

    static boolean keysNamed(String call, Set<String> bound) {
        List<String> args = arguments(call);
        if (args.isEmpty() || !args.getFirst().matches("'[A-Za-z]+'|\"[A-Za-z]+\"")) {
            return false;   // a command computed at run time: its keys cannot be told
        }
        String command = args.getFirst().substring(1, args.getFirst().length() - 1).toUpperCase();
        if (NO_KEY.contains(command)) {
            return true;
        }
        List<String> keys = ALL_KEYS.contains(command) ? args.subList(1, args.size()) : args.subList(1, Math.min(2, args.size()));
        return keys.stream().allMatch(k -> isKey(k, bound));
    }

    /** Locals assigned only from KEYS references, and loop variables over a table of them. */
    static Set<String> boundLocals(String text) {
        Map<String, Boolean> fromKeys = new HashMap<>();
        Matcher a = ASSIGN.matcher(text);
        while (a.find()) {
            String rhs = a.group(2).trim();
            boolean keys = KEYS_REF.matcher(rhs).matches();
            fromKeys.merge(a.group(1), keys, Boolean::logicalAnd);
        }
        Set<String> out = new HashSet<>();
        fromKeys.forEach((name, keys) -> {
            if (keys) {
                out.add(name);
            }
        });
        Matcher f = FOR_IPAIRS.matcher(text);
        while (f.find()) {
            if (arguments(f.group(2)).stream().allMatch(e -> KEYS_REF.matcher(e).matches()) && !fromKeys.containsKey(f.group(1))) {
                out.add(f.group(1));
            }
        }
        return out;
    }

    /** Parameters of local functions that every call of the function, in these scripts, passes a KEYS reference. */
    static Set<String> boundParameters(Iterable<String> scripts) {
        Map<String, List<String>> parameters = new HashMap<>();
        for (String text : scripts) {
            Matcher f = FUNCTION.matcher(text);
            while (f.find()) {
                parameters.put(f.group(1), arguments(f.group(2)));
            }
        }
        Set<String> out = new HashSet<>();
        parameters.forEach((function, names) -> {
            boolean[] keys = new boolean[names.size()];
            java.util.Arrays.fill(keys, true);
            int calls = 0;
            Pattern call = Pattern.compile("(?<!function\\s)\\b" + function + "\\s*\\(");
            for (String text : scripts) {
                for (String c : calls(text, call)) {
                    calls++;
                    List<String> args = arguments(c);
                    for (int i = 0; i < keys.length; i++) {
                        keys[i] &= i < args.size() && KEYS_REF.matcher(args.get(i)).matches();
                    }
                }
            }
            for (int i = 0; i < keys.length && calls > 0; i++) {
                if (keys[i]) {
                    out.add(names.get(i));
                }
            }
        });
        return out;
    }
}
