package dev.waterline.hooks;

import java.util.List;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaConstructor;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * No constructor in {@code hooks} or {@code hooks.sinks} takes more than eight parameters: past
 * that a class does two jobs, or its parts want a name (a record). The one exception is
 * {@link HookProperties}, the {@code waterline.hooks.*} record: each component is an operator's
 * key, and grouping them in nested records would rename those keys.
 */
class HookConstructorsUnitTests {

    @Test
    void noConstructorInHooksTakesMoreThanEightParameters() {
        JavaClasses classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.waterline.hooks");
        List<String> tooLong = classes.stream()
                .filter(c -> !c.isEquivalentTo(HookProperties.class))
                .flatMap(c -> c.getConstructors().stream())
                .filter(k -> k.getRawParameterTypes().size() > 8)
                .map(JavaConstructor::getFullName)
                .toList();
        assertThat(classes.size()).as("classes read").isGreaterThan(20);
        assertThat(tooLong).isEmpty();
    }
}
