package dev.waterline.architecture;

import java.util.Map;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.ConfigurationProperties;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * As {@link LoopConstructorsUnitTests}, for the message path's capabilities: no constructor in
 * streams (and its adapters), ingest, blobs, chat, history, receipts or outbox takes more than
 * eight parameters. Operators' configuration records ({@link ConfigurationProperties}) are exempt:
 * their components are the keys an operator sets. The data records listed in {@link #ROWS} are
 * still wider (each a wire shape or a stored row, changed with its own port); each must stay on
 * the list only while it is wider than eight, and no other may join them.
 */
class StreamConstructorsUnitTests {

    static final int MOST = LoopConstructorsUnitTests.MOST;

    /** Data records still wider than eight, and why they are not cut yet. */
    static final Map<String, String> ROWS = Map.of(
            "dev.waterline.streams.StreamView", "the stream as REST answers it (PROTOCOL.md §6)",
            "dev.waterline.history.HistoryMessage", "a history row as REST answers it",
            "dev.waterline.ingest.CommitParticipant$NewMessage", "the commit participants' port, changed with them",
            "dev.waterline.outbox.OutboxStore$Delivery", "the outbox port's append, changed with it",
            "dev.waterline.outbox.OutboxRow", "the outbox row every delivery path shares, changed with the outbox port");

    static JavaClasses classes() {
        return new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.waterline.streams", "dev.waterline.ingest", "dev.waterline.blobs", "dev.waterline.chat",
                        "dev.waterline.history", "dev.waterline.receipts", "dev.waterline.outbox");
    }

    static boolean wide(JavaClass c) {
        return c.getConstructors().stream().anyMatch(k -> k.getRawParameterTypes().size() > MOST);
    }

    @Test
    void noConstructorInTheMessagePathTakesMoreThanEightParameters() {
        JavaClasses classes = classes();
        assertThat(classes.stream().map(JavaClass::getName)).as("classes read").contains("dev.waterline.streams.Appender",
                "dev.waterline.ingest.Ingest", "dev.waterline.blobs.Blobs", "dev.waterline.receipts.Receipts");
        assertThat(classes.stream()
                .filter(c -> !c.isAnnotatedWith(ConfigurationProperties.class))
                .filter(c -> !ROWS.containsKey(c.getName()))
                .flatMap(c -> c.getConstructors().stream())
                .filter(k -> k.getRawParameterTypes().size() > MOST)
                .map(k -> k.getFullName()))
                .isEmpty();
    }

    @Test
    void theWideDataRecordsListedAreStillWideRecords() {
        JavaClasses classes = classes();
        for (String name : ROWS.keySet()) {
            JavaClass c = classes.get(name);
            assertThat(c.isRecord()).as(name + " is a record").isTrue();
            assertThat(wide(c)).as(name + " is narrower now: take it off the list").isTrue();
        }
    }
}
