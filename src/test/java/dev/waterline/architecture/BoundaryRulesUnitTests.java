package dev.waterline.architecture;

import java.util.Set;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.PackageMatchers;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.EvaluationResult;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Where the technology of a backend may appear, checked on the compiled classes (ArchUnit): JDBC
 * only in repositories and PostgreSQL adapters, Lettuce only in Redis adapters, and no capability
 * reaching into another capability's adapter sub-package. Each rule passes on the main classes and
 * is proven to fire on a class planted to break it ({@code architecture.planted}, test sources).
 */
class BoundaryRulesUnitTests {

    static final String ROOT = "dev.waterline";
    static final String PLANTED = ROOT + ".architecture.planted";

    /**
     * Classes that speak JDBC without being a repository or a PostgreSQL adapter by name, each
     * with the reason it stays. Named here so that no new one slips in; one that no longer speaks
     * JDBC fails {@link #theNamedDebtsAreStillThereAndStillSpeakTheirTechnology} until it leaves.
     */
    static final Set<String> JDBC_DEBTS = Set.of(
            // starts the embedded PostgreSQL of a dev run (before any DataSource exists) and creates its
            // database over a bare connection: infrastructure of the run, not a store of the application
            ROOT + ".config.EmbeddedServers",
            // sorts a failure into item, infrastructure or bug by the types and SQLSTATEs the drivers throw
            // (SQLException and its transient and recoverable kinds among them): one rule for both backends,
            // which a port per backend or a match on class names would only scatter or weaken
            ROOT + ".lifecycle.Failures");

    /** Classes that speak Lettuce outside a {@code redis} package or a {@code Redis*} adapter: debts, as above. */
    static final Set<String> LETTUCE_DEBTS = Set.of(
            // sorts a failure (Lettuce's connection and timeout exceptions among them) into transient or not
            ROOT + ".lifecycle.Failures");

    static final String[] JDBC_PACKAGES = {"java.sql..", "javax.sql..", "org.springframework.jdbc.."};
    static final String[] LETTUCE_PACKAGES = {"io.lettuce.."};

    static JavaClasses main;
    static JavaClasses planted;

    @BeforeAll
    static void importClasses() {
        main = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages(ROOT);
        planted = new ClassFileImporter().importPackages(PLANTED);
    }

    /** A class, or a nested or anonymous class of one, named in {@code names}. */
    static DescribedPredicate<JavaClass> namedIn(Set<String> names, String what) {
        return DescribedPredicate.describe(what, c -> names.contains(c.getName().split("\\$")[0]));
    }

    static DescribedPredicate<JavaClass> simpleNameOfTopLevel(String description, java.util.function.Predicate<String> test) {
        return DescribedPredicate.describe(description, c -> {
            String top = c.getName().split("\\$")[0];
            return test.test(top.substring(top.lastIndexOf('.') + 1));
        });
    }

    /** JDBC may appear in a repository, a PostgreSQL adapter (a {@code postgres} package or a {@code Postgres*} class) and {@code sql}. */
    static ArchRule jdbcOnlyInRepositoriesAndAdapters() {
        DescribedPredicate<JavaClass> allowed = DescribedPredicate.or(
                DescribedPredicate.describe("in a postgres package or in sql",
                        c -> c.getPackageName().contains(".postgres") || c.getPackageName().equals(ROOT + ".sql")),
                simpleNameOfTopLevel("a *Repository or Postgres* class", n -> n.endsWith("Repository") || n.startsWith("Postgres")),
                namedIn(JDBC_DEBTS, "a named debt"));
        return noClasses().that(DescribedPredicate.not(allowed))
                .should().dependOnClassesThat().resideInAnyPackage(JDBC_PACKAGES)
                .as("JDBC types appear only in repositories and PostgreSQL adapters");
    }

    /** Lettuce may appear in a Redis adapter: a {@code redis} package or a {@code Redis*} class. */
    static ArchRule lettuceOnlyInRedisAdapters() {
        DescribedPredicate<JavaClass> allowed = DescribedPredicate.or(
                DescribedPredicate.describe("in a redis package", c -> c.getPackageName().matches(".*\\.redis(\\..*)?")),
                simpleNameOfTopLevel("a Redis* class", n -> n.startsWith("Redis")),
                namedIn(LETTUCE_DEBTS, "a named debt"));
        return noClasses().that(DescribedPredicate.not(allowed))
                .should().dependOnClassesThat().resideInAnyPackage(LETTUCE_PACKAGES)
                .as("Lettuce types appear only in Redis adapters");
    }

    /** The capability of a class: its first package segment under the root (null outside it). */
    static String capability(String pkg) {
        if (!pkg.startsWith(ROOT + ".")) {
            return null;
        }
        String rest = pkg.substring(ROOT.length() + 1);
        int dot = rest.indexOf('.');
        return dot < 0 ? rest : rest.substring(0, dot);
    }

    /** No class reaches into the sub-package (an adapter: {@code outbox.postgres}, {@code watermark.redis}) of another capability. */
    static ArchRule noCapabilityReachesIntoAnothersAdapter() {
        ArchCondition<JavaClass> keepsOut = new ArchCondition<>("not depend on another capability's sub-packages") {
            @Override
            public void check(JavaClass c, ConditionEvents events) {
                String from = capability(c.getPackageName());
                for (Dependency d : c.getDirectDependenciesFromSelf()) {
                    String pkg = d.getTargetClass().getPackageName();
                    String to = capability(pkg);
                    if (to != null && !to.equals(from) && !pkg.equals(ROOT + "." + to)) {
                        events.add(SimpleConditionEvent.violated(c, d.getDescription()));
                    }
                }
            }
        };
        return classes().that().resideInAPackage(ROOT + "..").should(keepsOut)
                .as("no capability reaches into another capability's adapter sub-package");
    }

    @Test
    void jdbcAppearsOnlyInRepositoriesAndPostgresAdapters() {
        jdbcOnlyInRepositoriesAndAdapters().check(main);
    }

    @Test
    void lettuceAppearsOnlyInRedisAdapters() {
        lettuceOnlyInRedisAdapters().check(main);
    }

    @Test
    void noCapabilityReachesIntoAnotherCapabilitysAdapter() {
        noCapabilityReachesIntoAnothersAdapter().check(main);
    }

    @Test
    void theJdbcRuleFiresOnAPlantedJdbcUser() {
        assertFires(jdbcOnlyInRepositoriesAndAdapters(), "PlantedJdbcUser");
    }

    @Test
    void theLettuceRuleFiresOnAPlantedLettuceUser() {
        assertFires(lettuceOnlyInRedisAdapters(), "PlantedLettuceUser");
    }

    @Test
    void theAdapterRuleFiresOnAPlantedReachIntoWatermarkRedis() {
        assertFires(noCapabilityReachesIntoAnothersAdapter(), "PlantedAdapterReach");
    }

    @Test
    void theNamedDebtsAreStillThereAndStillSpeakTheirTechnology() {
        // a debt paid (the class gone, or clean) leaves the list: it must not excuse a newcomer by name
        for (String name : JDBC_DEBTS) {
            assertThat(main.contain(name)).as(name + " exists").isTrue();
            assertThat(dependsOn(name, JDBC_PACKAGES)).as(name + " still speaks JDBC (else it leaves JDBC_DEBTS)").isTrue();
        }
        for (String name : LETTUCE_DEBTS) {
            assertThat(main.contain(name)).as(name + " exists").isTrue();
            assertThat(dependsOn(name, LETTUCE_PACKAGES)).as(name + " still speaks Lettuce (else it leaves LETTUCE_DEBTS)").isTrue();
        }
    }

    @Test
    void theDebtCheckTellsAClassThatSpeaksJdbcFromOneThatDoesNot() {
        assertThat(dependsOn(PLANTED + ".PlantedJdbcUser", JDBC_PACKAGES, planted)).isTrue();
        assertThat(dependsOn(PLANTED + ".PlantedAdapterReach", JDBC_PACKAGES, planted)).isFalse();
    }

    /** Whether the top-level class {@code name} (or a nested or anonymous class of it) in the main classes depends on {@code packages}. */
    static boolean dependsOn(String name, String[] packages) {
        return dependsOn(name, packages, main);
    }

    static boolean dependsOn(String name, String[] packages, JavaClasses classes) {
        PackageMatchers in = PackageMatchers.of(packages);
        return classes.stream()
                .filter(c -> c.getName().split("\\$")[0].equals(name))
                .flatMap(c -> c.getDirectDependenciesFromSelf().stream())
                .anyMatch(d -> in.test(d.getTargetClass().getPackageName()));
    }

    private static void assertFires(ArchRule rule, String plantedClass) {
        EvaluationResult result = rule.evaluate(planted);
        assertThat(result.hasViolation()).as(rule.getDescription() + " fires on " + plantedClass).isTrue();
        assertThat(result.getFailureReport().getDetails()).anySatisfy(line -> assertThat(line).contains(PLANTED + "." + plantedClass));
    }
}
