package dev.waterline.architecture;

import java.util.List;
import java.util.Map;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaConstructor;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.waterline.session.Frames;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.ConfigurationProperties;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One job per class: no constructor in {@code src/main} takes more than eight parameters (beyond
 * that a class does two jobs, or its parts want a name: a record of collaborators, a
 * configuration record, a small builder). Exempt are the records whose components are names that
 * others read:
 * <ul>
 * <li>a {@code @ConfigurationProperties} record: each component is an operator's key, and
 *     grouping them in nested records would rename those keys;</li>
 * <li>the frame records of {@link Frames}: each component is a field of a frame on the wire
 *     (docs/PROTOCOL.md), in its order;</li>
 * <li>the data records of {@link #WIDE}, each named with its reason: wire shapes that REST answers
 *     field by field.</li>
 * </ul>
 * A record on that list must stay wider than eight, or come off it; no other may join it.
 */
class ConstructorWidthUnitTests {

    static final int MOST = 8;

    /** Data records still wider than eight, and why they are not cut yet. */
    static final Map<String, String> WIDE = Map.of(
            "dev.waterline.streams.StreamView", "the stream as REST answers it, field by field (docs/PROTOCOL.md, streams)",
            "dev.waterline.history.HistoryMessage", "a history row as REST answers it, field by field");

    static JavaClasses classes;

    @BeforeAll
    static void importMainClasses() {
        classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages("dev.waterline");
    }

    static boolean frame(JavaClass c) {
        return c.isRecord() && c.getEnclosingClass().map(e -> e.isEquivalentTo(Frames.class)).orElse(false);
    }

    static boolean wide(JavaClass c) {
        return c.getConstructors().stream().anyMatch(k -> k.getRawParameterTypes().size() > MOST);
    }

    @Test
    void noConstructorInTheServerTakesMoreThanEightParameters() {
        assertThat(classes.stream().map(JavaClass::getName)).as("classes read").contains(
                "dev.waterline.delivery.OutboxPoller", "dev.waterline.reclaim.Reclaim", "dev.waterline.gateway.GatewayHandler",
                "dev.waterline.streams.Appender", "dev.waterline.hooks.HookCaller", "dev.waterline.presence.redis.RedisPresence",
                "dev.waterline.watermark.redis.RedisWatermarkIndex", "dev.waterline.config.EmbeddedServers");
        List<String> tooWide = classes.stream()
                .filter(c -> !c.isAnnotatedWith(ConfigurationProperties.class))
                .filter(c -> !frame(c))
                .filter(c -> !WIDE.containsKey(c.getName()))
                .flatMap(c -> c.getConstructors().stream())
                .filter(k -> k.getRawParameterTypes().size() > MOST)
                .map(JavaConstructor::getFullName)
                .toList();
        assertThat(tooWide).isEmpty();
    }

    @Test
    void theWideDataRecordsListedAreStillWideRecords() {
        for (String name : WIDE.keySet()) {
            JavaClass c = classes.get(name);
            assertThat(c.isRecord()).as(name + " is a record").isTrue();
            assertThat(wide(c)).as(name + " is narrower now: take it off the list").isTrue();
        }
    }
}
