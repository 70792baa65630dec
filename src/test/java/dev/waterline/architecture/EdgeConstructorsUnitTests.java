package dev.waterline.architecture;

import java.util.List;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaConstructor;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.waterline.session.Frames;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.ConfigurationProperties;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The edge keeps one job per class: no constructor in {@code gateway}, {@code metrics},
 * {@code lifecycle}, {@code web}, {@code session}, {@code input} or {@code auth} takes more than
 * eight parameters (beyond that a class does two jobs, or its parts want a name: a record of
 * collaborators, a configuration record). Two kinds of record are exempt, since their components
 * are names others read: a {@code @ConfigurationProperties} record (each component is an
 * operator's key, and grouping them in nested records would rename those keys), and the frame
 * records of {@link Frames} (each component is a field of a frame on the wire, docs/PROTOCOL.md,
 * in its order).
 */
class EdgeConstructorsUnitTests {

    static final int MOST = LoopConstructorsUnitTests.MOST;

    @Test
    void noConstructorAtTheEdgeTakesMoreThanEightParameters() {
        JavaClasses classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.waterline.gateway", "dev.waterline.metrics", "dev.waterline.lifecycle",
                        "dev.waterline.web", "dev.waterline.session", "dev.waterline.input", "dev.waterline.auth");

        assertThat(classes.stream().map(c -> c.getName())).as("classes read").contains("dev.waterline.gateway.GatewayHandler",
                "dev.waterline.gateway.Connection", "dev.waterline.metrics.WaterlineMetrics", "dev.waterline.lifecycle.Loops");
        List<String> tooLong = classes.stream()
                .filter(c -> !c.isAnnotatedWith(ConfigurationProperties.class))
                .filter(c -> !(c.isRecord() && c.getEnclosingClass().map(e -> e.isEquivalentTo(Frames.class)).orElse(false)))
                .flatMap(c -> c.getConstructors().stream())
                .filter(k -> k.getRawParameterTypes().size() > MOST)
                .map(JavaConstructor::getFullName)
                .toList();
        assertThat(tooLong).isEmpty();
    }
}
