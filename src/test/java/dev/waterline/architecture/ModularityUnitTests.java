package dev.waterline.architecture;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The package boundaries, checked on the compiled classes (ArchUnit): no cycle between
 * capabilities; every capability's {@code package-info} says in one sentence which others it
 * calls ("Calls {@code a}, {@code b} and {@code c}." or "Calls nothing else"), and that sentence
 * is exactly what the code does, no more and no less; and a capability's sub-packages (its
 * adapters: {@code outbox.postgres}, {@code presence.redis}) are its own, reached by nobody else.
 */
class ModularityUnitTests {

    static final String ROOT = "dev.waterline";
    static final Pattern CALLS = Pattern.compile("Calls (nothing else|[^.]*?)(?:\\.\\s|\\.$|\\.\\n)", Pattern.DOTALL);
    static final Pattern CODE = Pattern.compile("\\{@code ([a-z.]+)}");

    static JavaClasses classes;

    @BeforeAll
    static void importMainClasses() {
        classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages(ROOT);
    }

    /** The capability a class belongs to: the first package segment under the root, or null for the root itself. */
    static String capability(JavaClass c) {
        String pkg = c.getPackageName();
        if (!pkg.startsWith(ROOT + ".")) {
            return null;
        }
        String rest = pkg.substring(ROOT.length() + 1);
        int dot = rest.indexOf('.');
        return dot < 0 ? rest : rest.substring(0, dot);
    }

    /** Capability → the capabilities its classes depend on (the root package's application class excluded). */
    static Map<String, Set<String>> actualCalls() {
        Map<String, Set<String>> calls = new TreeMap<>();
        for (JavaClass c : classes) {
            String from = capability(c);
            if (from == null) {
                continue;
            }
            calls.computeIfAbsent(from, k -> new TreeSet<>());
            for (Dependency d : c.getDirectDependenciesFromSelf()) {
                String to = capability(d.getTargetClass());
                if (to != null && !to.equals(from)) {
                    calls.get(from).add(to);
                }
            }
        }
        return calls;
    }

    /** Capability → what its package-info's "Calls" sentence lists. */
    static Map<String, Set<String>> declaredCalls() throws IOException {
        Map<String, Set<String>> declared = new TreeMap<>();
        Path src = Path.of("src/main/java/dev/waterline");
        try (Stream<Path> dirs = Files.list(src)) {
            for (Path dir : dirs.filter(Files::isDirectory).toList()) {
                Path info = dir.resolve("package-info.java");
                assertThat(info).as("every capability has a package-info: " + dir.getFileName()).exists();
                String text = Files.readString(info);
                Matcher m = CALLS.matcher(text.replaceAll("\\n\\s*\\*", " "));
                assertThat(m.find()).as(info + " says what it calls (\"Calls ...\")").isTrue();
                Set<String> listed = new TreeSet<>();
                if (!m.group(1).equals("nothing else")) {
                    Matcher code = CODE.matcher(m.group(1));
                    while (code.find()) {
                        listed.add(code.group(1));
                    }
                }
                declared.put(dir.getFileName().toString(), listed);
            }
        }
        return declared;
    }

    @Test
    void noCapabilityDependsOnAnotherInACycle() {
        slices().matching(ROOT + ".(*)..").should().beFreeOfCycles().check(classes);
    }

    @Test
    void everyPackageInfoSaysExactlyWhichCapabilitiesItsCodeCalls() throws IOException {
        Map<String, Set<String>> actual = actualCalls();
        Map<String, Set<String>> declared = declaredCalls();
        assertThat(declared.keySet()).as("a package-info for every capability with code").containsAll(actual.keySet());
        List<String> problems = new ArrayList<>();
        for (var e : declared.entrySet()) {
            Set<String> does = actual.getOrDefault(e.getKey(), Set.of());
            Set<String> undeclared = new TreeSet<>(does);
            undeclared.removeAll(e.getValue());
            Set<String> unused = new TreeSet<>(e.getValue());
            unused.removeAll(does);
            if (!undeclared.isEmpty()) {
                problems.add(e.getKey() + " calls " + undeclared + " but its package-info does not say so");
            }
            if (!unused.isEmpty()) {
                problems.add(e.getKey() + "'s package-info lists " + unused + ", which its code does not call");
            }
        }
        assertThat(problems).isEmpty();
    }

    @Test
    void aCapabilitysSubPackagesAreReachedFromItselfOnly() {
        List<String> problems = new ArrayList<>();
        for (JavaClass c : classes) {
            for (Dependency d : c.getDirectDependenciesFromSelf()) {
                JavaClass target = d.getTargetClass();
                String to = capability(target);
                if (to == null || target.getPackageName().equals(ROOT + "." + to)) {
                    continue;   // not ours, or a capability's own top-level package: its public face
                }
                if (!to.equals(capability(c))) {
                    problems.add(c.getName() + " reaches into " + target.getName());
                }
            }
        }
        assertThat(problems).isEmpty();
    }
}
