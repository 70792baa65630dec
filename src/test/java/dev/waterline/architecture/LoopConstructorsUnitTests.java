package dev.waterline.architecture;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The delivery, reclaim and reaper loops keep one job per class: no constructor there takes more
 * than eight parameters (beyond that a class does two jobs, or its parts want a name: a record of
 * collaborators, a configuration record).
 */
class LoopConstructorsUnitTests {

    static final int MOST = 8;

    @Test
    void noConstructorInTheDeliveryReclaimOrReaperLoopsTakesMoreThanEightParameters() {
        JavaClasses classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.waterline.delivery", "dev.waterline.reclaim", "dev.waterline.reaper");

        assertThat(classes.stream().map(c -> c.getName())).as("classes read").contains("dev.waterline.delivery.OutboxPoller",
                "dev.waterline.reclaim.Reclaim");
        assertThat(classes.stream().flatMap(c -> c.getConstructors().stream())
                .filter(c -> c.getRawParameterTypes().size() > MOST)
                .map(c -> c.getFullName()))
                .isEmpty();
    }
}
