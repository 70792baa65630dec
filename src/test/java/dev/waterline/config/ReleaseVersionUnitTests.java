package dev.waterline.config;

import java.nio.file.Files;
import java.nio.file.Path;

import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.xpath.XPathFactory;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * One version per release: the server's jar, the load generator's, their shared parent pom
 * (parent/pom.xml, which both name by that version) and the JavaScript client's npm package carry
 * the same one, so that a release changes them together (CHANGELOG.md names it).
 */
class ReleaseVersionUnitTests {

    static final Path ROOT = Path.of("").toAbsolutePath();

    @Test
    void theServerTheLoadGeneratorTheirParentAndTheJavaScriptClientCarryOneVersion() throws Exception {
        String server = pomVersion("pom.xml");
        assertThat(server).as("pom.xml's version").matches("\\d+\\.\\d+\\.\\d+(-SNAPSHOT)?");
        assertThat(pomVersion("load-tests/pom.xml")).as("load-tests/pom.xml").isEqualTo(server);
        assertThat(pomVersion("parent/pom.xml")).as("parent/pom.xml").isEqualTo(server);
        assertThat(pomValue("pom.xml", "/project/parent/artifactId")).as("pom.xml's parent").isEqualTo("waterline-parent");
        assertThat(pomValue("pom.xml", "/project/parent/version")).as("pom.xml's parent's version").isEqualTo(server);
        assertThat(pomValue("load-tests/pom.xml", "/project/parent/artifactId")).as("load-tests/pom.xml's parent")
                .isEqualTo("waterline-parent");
        assertThat(pomValue("load-tests/pom.xml", "/project/parent/version")).as("load-tests/pom.xml's parent's version")
                .isEqualTo(server);

        JsonNode client = json("clients/js/package.json");
        assertThat(client.path("version").asString()).as("clients/js/package.json").isEqualTo(server);
        JsonNode lock = json("clients/js/package-lock.json");
        assertThat(lock.path("version").asString()).as("clients/js/package-lock.json").isEqualTo(server);
        assertThat(lock.path("packages").path("").path("version").asString())
                .as("clients/js/package-lock.json, its root package").isEqualTo(server);
    }

    @Test
    void aReleasedVersionHasItsChangelogEntry() throws Exception {
        String version = pomVersion("pom.xml");
        assumeThat(version).as("a version in the making is under [Unreleased]").doesNotEndWith("-SNAPSHOT");
        assertThat(Files.readString(ROOT.resolve("CHANGELOG.md"))).contains("## [" + version + "] - ");
    }

    /** The project's own version, not its parent's. */
    static String pomVersion(String path) throws Exception {
        return pomValue(path, "/project/version");
    }

    static String pomValue(String path, String xpath) throws Exception {
        var document = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(ROOT.resolve(path).toFile());
        return XPathFactory.newInstance().newXPath().evaluate(xpath, document).trim();
    }

    static JsonNode json(String path) throws Exception {
        return JsonMapper.builder().build().readTree(Files.readString(ROOT.resolve(path)));
    }
}
