package dev.waterline.architecture;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every class, method and constant that the invariant ledger (the {@code ## Invariants} table of
 * docs/ARCHITECTURE.md) names exists in the compiled code, main and test classes alike (the
 * classes under {@code dev.waterline} on the test class path: {@code target/classes} and
 * {@code target/test-classes}, read by ArchUnit's importer), so that a rename or a removal cannot
 * leave a row pointing at code that is no longer there.
 *
 * <p>The rule. Every backticked span in a row of the table is read, and it is a code reference
 * when it has one of these shapes (an optional {@code ()} at the end is dropped first):
 * <ul>
 *   <li>{@code Type}: an upper-case initial, letters and digits only, at least one of them lower
 *       case ({@code Reclaim}, {@code OutboxPoller}). It must be a class (top-level or nested)
 *       under {@code dev.waterline}; failing that, a class of {@code java.lang} ({@code Error}).</li>
 *   <li>{@code Type.member}, and {@code Type.Nested.member}: each segment after the type a nested
 *       class of the one before, the last one a field, a method or a nested class of it (its
 *       supertypes' included). An ellipsis ({@code …}) in a segment stands for any characters, so
 *       {@code HooksHttpIntegrationTests.aHangingTarget…} is a method whose name starts that way.</li>
 *   <li>{@code package.Type} and {@code package.Type.member}: lower-case segments before the type
 *       name a package under {@code dev.waterline} ({@code lifecycle.Loops},
 *       {@code load.chat.Reconciler}); failing that, the span is a fully qualified name of a library's
 *       class and is resolved on the class path ({@code org.springframework…ReadinessState}).</li>
 *   <li>{@code UPPER_SNAKE}, with at least one underscore and nothing else: a constant, a static
 *       field of some class under {@code dev.waterline} ({@code USED_KEYS}).</li>
 * </ul>
 * Nothing else is code, and nothing else is checked: SQL (anything with a space, or one upper-case
 * word without an underscore: {@code FOR UPDATE}, {@code DELETE}); property names and settings
 * ({@code waterline.cluster.enabled}, {@code max-in-flight}: lower case only, or hyphens); file
 * names and paths ({@code ack.lua}, {@code V8__blob_parts.sql}, {@code Main.java},
 * {@code load-tests/chaos.sh}: a known file extension, a slash, no type segment); Prometheus series
 * ({@code waterline_*}); protocol fields, frame types and codes ({@code seq}, {@code accepted},
 * {@code "stream"}, {@code 400}); HTTP headers ({@code Retry-After}); JavaScript members
 * ({@code #drain}); and bare lower-case identifiers ({@code alignChunk}), which name no class to
 * look in: a member the ledger means to have checked is written with its class.
 */
class LedgerReferencesUnitTests {

    static final Path ARCHITECTURE = Path.of("docs/ARCHITECTURE.md");
    static final String ROOT = "dev.waterline";
    static final Pattern SPAN = Pattern.compile("`([^`]+)`");
    static final Pattern REFERENCE = Pattern.compile(
            "((?:[a-z][a-z0-9]*\\.)*)([A-Z][A-Za-z0-9]*)((?:\\.[A-Za-z_…][A-Za-z0-9_…]*)*)");
    static final Pattern CONSTANT = Pattern.compile("[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+");
    static final Pattern FILE = Pattern.compile(".*\\.(java|class|sql|lua|js|mjs|ts|json|ya?ml|md|properties|sh|csv|png|xml|txt|html|css)");

    static JavaClasses classes;

    @BeforeAll
    static void importCompiledClasses() {
        classes = new ClassFileImporter().importPackages(ROOT);
    }

    /**
     * A code reference read from a span: a constant ({@code type} null), or a type with the package
     * written before it (empty if none) and the segments after it.
     */
    record Reference(String text, String packagePrefix, String type, List<String> members) {
    }

    /** The code reference a backticked span is, or empty if the span is not code (the rule above). */
    static Optional<Reference> read(String span) {
        String text = span.endsWith("()") ? span.substring(0, span.length() - 2) : span;
        if (FILE.matcher(text).matches()) {
            return Optional.empty();
        }
        if (CONSTANT.matcher(text).matches()) {
            return Optional.of(new Reference(text, "", null, List.of()));
        }
        Matcher m = REFERENCE.matcher(text);
        if (!m.matches() || m.group(2).chars().noneMatch(Character::isLowerCase)) {
            return Optional.empty();
        }
        List<String> members = m.group(3).isEmpty() ? List.of() : List.of(m.group(3).substring(1).split("\\."));
        return Optional.of(new Reference(text, m.group(1), m.group(2), members));
    }

    /** Something whose members can be looked up: a class of ours (from its bytecode) or a library's (by reflection). */
    interface Owner {
        boolean hasFieldOrMethod(Pattern name);

        List<Owner> nested(Pattern name);
    }

    record Ours(JavaClass type) implements Owner {
        @Override
        public boolean hasFieldOrMethod(Pattern name) {
            return type.getAllFields().stream().anyMatch(f -> name.matcher(f.getName()).matches())
                    || type.getAllMethods().stream().anyMatch(mt -> name.matcher(mt.getName()).matches());
        }

        @Override
        public List<Owner> nested(Pattern name) {
            List<Owner> found = new ArrayList<>();
            for (JavaClass c : classes) {
                if (c.getEnclosingClass().map(e -> e.getName().equals(type.getName())).orElse(false)
                        && name.matcher(c.getSimpleName()).matches()) {
                    found.add(new Ours(c));
                }
            }
            return found;
        }
    }

    record Library(Class<?> type) implements Owner {
        @Override
        public boolean hasFieldOrMethod(Pattern name) {
            for (Class<?> c = type; c != null; c = c.getSuperclass()) {
                if (Stream.concat(Arrays.stream(c.getDeclaredFields()).map(java.lang.reflect.Field::getName),
                        Arrays.stream(c.getDeclaredMethods()).map(java.lang.reflect.Method::getName))
                        .anyMatch(n -> name.matcher(n).matches())) {
                    return true;
                }
            }
            return Arrays.stream(type.getMethods()).anyMatch(mt -> name.matcher(mt.getName()).matches());
        }

        @Override
        public List<Owner> nested(Pattern name) {
            return Arrays.stream(type.getDeclaredClasses()).filter(c -> name.matcher(c.getSimpleName()).matches())
                    .map(c -> (Owner) new Library(c)).toList();
        }
    }

    /** A member name with its ellipses as wildcards. */
    static Pattern memberPattern(String segment) {
        return Pattern.compile(Arrays.stream(segment.split("…", -1)).map(Pattern::quote).collect(Collectors.joining(".*")));
    }

    static Optional<Class<?>> library(String name) {
        try {
            return Optional.of(Class.forName(name, false, LedgerReferencesUnitTests.class.getClassLoader()));
        }
        catch (ClassNotFoundException | LinkageError absent) {
            return Optional.empty();
        }
    }

    /** The classes a reference's type can be. */
    static List<Owner> owners(Reference r) {
        if (!r.packagePrefix().isEmpty()) {
            String ours = ROOT + "." + r.packagePrefix() + r.type();
            if (classes.contain(ours)) {
                return List.of(new Ours(classes.get(ours)));
            }
            return library(r.packagePrefix() + r.type()).map(c -> List.<Owner>of(new Library(c))).orElse(List.of());
        }
        List<Owner> found = new ArrayList<>();
        for (JavaClass c : classes) {
            if (c.getSimpleName().equals(r.type())) {
                found.add(new Ours(c));
            }
        }
        if (found.isEmpty()) {
            library("java.lang." + r.type()).ifPresent(c -> found.add(new Library(c)));
        }
        return found;
    }

    /** Why a reference names nothing in the code, or null if it names something. */
    static String problem(Reference r) {
        if (r.type() == null) {
            for (JavaClass c : classes) {
                if (c.getFields().stream().anyMatch(f -> f.getName().equals(r.text()) && f.getModifiers().contains(JavaModifier.STATIC))) {
                    return null;
                }
            }
            return "no class under " + ROOT + " has a constant " + r.text();
        }
        List<Owner> owners = owners(r);
        if (owners.isEmpty()) {
            return "no class " + r.packagePrefix() + r.type() + " under " + ROOT + (r.packagePrefix().isEmpty() ? " nor in java.lang" : " nor on the class path");
        }
        for (int i = 0; i < r.members().size(); i++) {
            Pattern name = memberPattern(r.members().get(i));
            boolean last = i == r.members().size() - 1;
            if (last && owners.stream().anyMatch(o -> o.hasFieldOrMethod(name))) {
                return null;
            }
            List<Owner> next = owners.stream().flatMap(o -> o.nested(name).stream()).toList();
            if (next.isEmpty()) {
                return r.type() + " has no " + (last ? "field, method or nested class " : "nested class ") + r.members().get(i);
            }
            owners = next;
        }
        return null;
    }

    /** The rows of the invariants table: every line of the section that starts with "|", header and rule lines apart. */
    static List<String> ledgerRows() throws IOException {
        List<String> lines = Files.readAllLines(ARCHITECTURE);
        int start = lines.indexOf("## Invariants");
        assertThat(start).as("docs/ARCHITECTURE.md has an \"## Invariants\" section").isNotNegative();
        List<String> rows = new ArrayList<>();
        for (String line : lines.subList(start + 1, lines.size())) {
            if (line.startsWith("## ")) {
                break;
            }
            if (line.startsWith("| ") && !line.startsWith("| ---") && !line.startsWith("| |")) {
                rows.add(line);
            }
        }
        return rows;
    }

    @Test
    void everyClassMethodAndConstantTheLedgerNamesIsInTheCompiledCode() throws IOException {
        List<String> rows = ledgerRows();
        List<String> problems = new ArrayList<>();
        int checked = 0;
        for (String row : rows) {
            String id = row.split("\\|")[1].trim();
            Matcher span = SPAN.matcher(row);
            while (span.find()) {
                Optional<Reference> ref = read(span.group(1));
                if (ref.isPresent()) {
                    checked++;
                    String problem = problem(ref.get());
                    if (problem != null) {
                        problems.add((id.isEmpty() ? "a row" : id) + ": `" + span.group(1) + "`: " + problem);
                    }
                }
            }
        }
        assertThat(rows).as("rows of the ledger").hasSizeGreaterThan(50);
        assertThat(checked).as("code references found in the ledger (the rule still reads it)").isGreaterThan(150);
        assertThat(problems).as("ledger references that name nothing in the code").isEmpty();
    }

    @Test
    void theRuleTellsCodeFromEverythingElseTheLedgerQuotes() {
        assertThat(Stream.of("Reclaim", "Reclaim.lead", "Ingest.isRunning()", "lifecycle.Loops", "load.chat.Reconciler",
                "USED_KEYS", "HistoryRepository.PAGE_FOR_MEMBER", "Sink.Outcome.NotMade", "HooksHttpIntegrationTests.aHangingTarget…",
                "Error", "org.springframework.boot.availability.ReadinessState.REFUSING_TRAFFIC"))
                .allSatisfy(span -> assertThat(read(span)).as(span).isPresent());
        assertThat(Stream.of("ack.lua", "V8__blob_parts.sql", "Main.java", "client.test.js", "waterline.cluster.enabled",
                "waterline_*", "waterline_loop_errors_total{loop}", "FOR UPDATE", "INSERT … SELECT", "DELETE", "max-in-flight",
                "Retry-After", "\"stream\"", "#drain", "seq", "alignChunk", "org.apache.kafka", "load-tests/chaos.sh", "400",
                "-XX:+ExitOnOutOfMemoryError", "(chat_id, seq)"))
                .allSatisfy(span -> assertThat(read(span)).as(span).isEmpty());
    }

    @Test
    void aNameTheCodeDoesNotHaveIsReportedAndOneItHasIsNot() {
        assertThat(Stream.of("NoSuchClassAnywhere", "Reclaim.noSuchMember", "NO_SUCH_CONSTANT_ANYWHERE",
                "HooksHttpIntegrationTests.noTestStartsLikeThis…", "lifecycle.NoSuchLoops", "Sink.NoSuchNested.Done", "Blobs.Pace"))
                .allSatisfy(span -> assertThat(problem(read(span).orElseThrow())).as(span).isNotNull());
        assertThat(Stream.of("Reclaim", "Reclaim.lead", "Ingest.isRunning()", "lifecycle.Loops", "USED_KEYS", "web.Pace", "Sink.Outcome.NotMade",
                "HooksHttpIntegrationTests.theBreakerOpens…LetsExactlyOneProbeThroughAmongTwentyWorkers…", "Error",
                "org.springframework.boot.availability.ReadinessState.REFUSING_TRAFFIC"))
                .allSatisfy(span -> assertThat(problem(read(span).orElseThrow())).as(span).isNull());
    }
}
