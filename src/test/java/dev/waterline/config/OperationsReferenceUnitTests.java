package dev.waterline.config;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/OPERATIONS.md is the configuration reference: every {@code waterline.*} property the server
 * binds (as the configuration processor lists them from the properties records) has a row there
 * with its environment variable and the code's default, so the reference cannot fall behind the
 * code.
 */
class OperationsReferenceUnitTests {

    @Test
    void everyPropertyTheServerBindsIsInTheReferenceWithItsEnvironmentNameAndDefault() throws IOException {
        JsonNode metadata;
        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertThat(in).as("the configuration processor's metadata").isNotNull();
            metadata = JsonMapper.builder().build().readTree(in);
        }
        List<String> rows = Files.readAllLines(Path.of("docs/OPERATIONS.md")).stream().filter(l -> l.startsWith("| `")).toList();
        List<String> problems = new ArrayList<>();
        int checked = 0;
        for (JsonNode property : metadata.get("properties")) {
            String name = property.get("name").asString();
            String env = name.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
            List<String> row = rows.stream().filter(r -> r.startsWith("| `" + name + "` |")).toList();
            checked++;
            if (row.size() != 1) {
                problems.add(name + ": " + row.size() + " rows");
                continue;
            }
            String[] cells = row.getFirst().split("\\|");
            if (!cells[2].trim().equals("`" + env + "`")) {
                problems.add(name + ": environment column " + cells[2].trim() + ", expected `" + env + "`");
            }
            JsonNode dflt = property.get("defaultValue");
            if (dflt != null && !dflt.isNull() && !cells[3].contains("`" + dflt.asString() + "`")) {
                problems.add(name + ": default column " + cells[3].trim() + ", the code's is " + dflt.asString());
            }
        }
        assertThat(checked).as("properties in the metadata").isGreaterThan(50);
        assertThat(problems).isEmpty();
    }
}
