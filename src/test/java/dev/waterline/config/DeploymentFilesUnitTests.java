package dev.waterline.config;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.waterline.auth.AuthProperties;
import dev.waterline.gateway.GatewayProperties;
import dev.waterline.ingest.InboundProperties;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.boot.convert.DurationStyle;
import org.yaml.snakeyaml.Yaml;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The deployment files agree with each other and with the code: what {@code docker compose up}
 * and {@code deploy/compose-smoke.sh} rely on, checked without Docker (the smoke run itself needs
 * root and minutes, so it is not part of {@code ./mvnw verify}).
 */
class DeploymentFilesUnitTests {

    static final Path ROOT = Path.of("").toAbsolutePath();
    static final Map<String, String> IMAGE_VARIABLES = Map.of(
            "app", "WATERLINE_IMAGE", "postgres", "POSTGRES_IMAGE", "redis", "REDIS_IMAGE",
            "prometheus", "PROMETHEUS_IMAGE", "grafana", "GRAFANA_IMAGE", "app2", "WATERLINE_IMAGE", "haproxy", "HAPROXY_IMAGE");
    static final Pattern OVERRIDABLE = Pattern.compile("\\$\\{([A-Z_]+):-([^}]+)}");

    @SuppressWarnings("unchecked")
    static Map<String, Object> yaml(String path) throws IOException {
        try (InputStream in = Files.newInputStream(ROOT.resolve(path))) {
            return new Yaml().load(in);
        }
    }

    @SuppressWarnings("unchecked")
    static Map<String, Map<String, Object>> services() throws IOException {
        return (Map<String, Map<String, Object>>) yaml("docker-compose.yml").get("services");
    }

    @Test
    void everyImageOfTheStackIsOverridableByItsEnvironmentVariable() throws IOException {
        Map<String, Map<String, Object>> services = services();
        assertThat(services).containsOnlyKeys(IMAGE_VARIABLES.keySet());
        services.forEach((name, service) -> {
            Matcher m = OVERRIDABLE.matcher(String.valueOf(service.get("image")));
            assertThat(m.matches()).as(name + "'s image is ${VARIABLE:-default}").isTrue();
            assertThat(m.group(1)).as(name).isEqualTo(IMAGE_VARIABLES.get(name));
        });
        assertThat(services.get("postgres").get("image")).asString().endsWith(":-postgres:17}");
        assertThat(services.get("redis").get("image")).asString().endsWith(":-redis:7}");
    }

    @Test
    @SuppressWarnings("unchecked")
    void everyServiceHasAHealthcheckAndStartsOnlyAfterWhatItNeedsIsHealthy() throws IOException {
        Map<String, Map<String, Object>> services = services();
        services.forEach((name, service) -> assertThat(service).as(name).containsKey("healthcheck"));
        services.forEach((name, service) -> {
            Map<String, Map<String, String>> needs = (Map<String, Map<String, String>>) service.getOrDefault("depends_on", Map.of());
            needs.forEach((other, how) -> assertThat(how.get("condition")).as(name + " → " + other).isEqualTo("service_healthy"));
        });
        assertThat(((Map<String, Object>) services.get("app").get("depends_on"))).containsOnlyKeys("postgres", "redis");
        assertThat(((Map<String, Object>) services.get("app2").get("depends_on"))).containsOnlyKeys("postgres", "redis");
        assertThat(((Map<String, Object>) services.get("haproxy").get("depends_on"))).containsOnlyKeys("app", "app2");
        // the app checks readiness: down while PostgreSQL or Redis is, and first on shutdown
        assertThat(services.get("app").get("healthcheck").toString()).contains("/actuator/health/readiness");
    }

    @Test
    @SuppressWarnings("unchecked")
    void portsArePublishedOnLoopbackOnlyAndDataLivesInNamedVolumes() throws IOException {
        services().forEach((name, service) -> ((List<String>) service.getOrDefault("ports", List.of()))
                .forEach(p -> assertThat(p).as(name).startsWith("127.0.0.1:")));
        Map<String, Object> volumes = (Map<String, Object>) yaml("docker-compose.yml").get("volumes");
        assertThat(volumes).containsKeys("postgres-data", "prometheus-data");
        assertThat((List<String>) services().get("postgres").get("volumes")).contains("postgres-data:/var/lib/postgresql/data");
        assertThat(services().get("redis")).as("Redis is an index: nothing to keep").doesNotContainKey("volumes");
    }

    @Test
    @SuppressWarnings("unchecked")
    void theLocalStackRunsWithDevTokensAndThePublishedSecretWhichTheAppRefusesWithoutThem() throws IOException {
        Map<String, String> env = (Map<String, String>) services().get("app").get("environment");
        Matcher secret = OVERRIDABLE.matcher(env.get("WATERLINE_AUTH_JWT_SECRET"));
        assertThat(secret.matches()).isTrue();
        assertThat(secret.group(1)).isEqualTo("WATERLINE_AUTH_JWT_SECRET");
        assertThat(secret.group(2)).as("the secret the server recognises and warns about")
                .isEqualTo(AuthProperties.PUBLISHED_DEVELOPMENT_SECRET);
        assertThat(env.get("WATERLINE_AUTH_DEV_TOKENS")).isEqualTo("${WATERLINE_AUTH_DEV_TOKENS:-true}");

        Properties containers = new Properties();
        try (InputStream in = Files.newInputStream(ROOT.resolve("src/test/resources/application-containers.properties"))) {
            containers.load(in);
        }
        assertThat(containers.getProperty("waterline.auth.jwt-secret")).isEqualTo(AuthProperties.PUBLISHED_DEVELOPMENT_SECRET);
        assertThat(containers.getProperty("waterline.auth.dev-tokens")).isEqualTo("true");
    }

    /**
     * The longest the app's shutdown can take, phase by phase (docs/ARCHITECTURE.md, "Shutdown"),
     * is less than what Docker gives it before SIGKILL: ingest's drain and then a batch in flight
     * (drain-timeout + commit-timeout + 1 s), the gateway's closes (close-timeout + 1 s, after the
     * write watchdog's 2 s), delivery, reclaim and reapers (up to 5 s), the ack recorder (2 s), and
     * Tomcat's graceful phase for REST requests still running (timeout-per-shutdown-phase).
     */
    @Test
    @SuppressWarnings("unchecked")
    void theClusterProfileRunsASecondNodeLikeTheFirstBehindHaproxyThatChecksReadinessAndKeepsWebSocketsOpen() throws Exception {
        Map<String, Map<String, Object>> services = services();
        assertThat((List<String>) services.get("app2").get("profiles")).containsExactly("cluster");
        assertThat((List<String>) services.get("haproxy").get("profiles")).containsExactly("cluster");
        assertThat(services.get("app").get("profiles")).as("the default profile is one node").isNull();
        assertThat(services.get("app2").get("environment")).isEqualTo(services.get("app").get("environment"));
        assertThat(services.get("app2").get("stop_grace_period")).isEqualTo(services.get("app").get("stop_grace_period"));
        String haproxy = Files.readString(ROOT.resolve("deploy/haproxy/haproxy.cfg"));
        assertThat(haproxy).contains("server app app:8080 check", "server app2 app2:8080 check",
                "option httpchk GET /actuator/health/readiness");
        Matcher tunnel = Pattern.compile("timeout tunnel (\\d+)h").matcher(haproxy);
        assertThat(tunnel.find()).as("an upgraded WebSocket is not cut by the proxy's idle timeout").isTrue();
        assertThat(Duration.ofHours(Long.parseLong(tunnel.group(1))))
                .isGreaterThan(defaultOf(dev.waterline.reaper.ReaperProperties.class, "idleTimeout"));
        assertThat((List<String>) services.get("haproxy").get("volumes")).contains("./deploy/haproxy:/usr/local/etc/haproxy:ro");
    }

    @Test
    void dockerGivesTheAppMoreTimeToStopThanItsShutdownCanTake() throws Exception {
        Duration ingest = defaultOf(InboundProperties.class, "drainTimeout").plus(defaultOf(InboundProperties.class, "commitTimeout"))
                .plusSeconds(1);
        Duration gateway = defaultOf(GatewayProperties.class, "closeTimeout").plusSeconds(1 + 2);
        Properties app = new Properties();
        try (InputStream in = Files.newInputStream(ROOT.resolve("src/main/resources/application.properties"))) {
            app.load(in);
        }
        Duration webPhase = DurationStyle.detectAndParse(app.getProperty("spring.lifecycle.timeout-per-shutdown-phase"));
        Duration worst = ingest.plus(gateway).plusSeconds(5 + 2).plus(webPhase);
        Duration grace = DurationStyle.detectAndParse(String.valueOf(services().get("app").get("stop_grace_period")));
        assertThat(grace).as("SIGKILL only after the whole shutdown (worst case %s)", worst).isGreaterThan(worst);
        assertThat(webPhase).as("a phase's timeout leaves ingest its whole drain").isGreaterThan(ingest);
    }

    @Test
    @SuppressWarnings("unchecked")
    void prometheusScrapesTheAppServiceAndLoadsTheRulesTheTestsCheck() throws IOException {
        Map<String, Object> config = yaml("deploy/prometheus/prometheus.yml");
        List<Map<String, Object>> jobs = (List<Map<String, Object>>) config.get("scrape_configs");
        Map<String, Object> app = jobs.stream().filter(j -> "waterline".equals(j.get("job_name"))).findFirst().orElseThrow();
        assertThat(app.get("metrics_path")).isEqualTo("/actuator/prometheus");
        Map<String, Object> dns = ((List<Map<String, Object>>) app.get("dns_sd_configs")).getFirst();
        assertThat((List<String>) dns.get("names")).as("every app node, by its service name").containsExactlyInAnyOrder("app", "app2");
        assertThat(dns.get("port")).isEqualTo(8080);
        assertThat(services()).containsKeys("app", "app2");

        List<String> mounts = (List<String>) services().get("prometheus").get("volumes");
        assertThat(mounts).contains("./deploy/prometheus:/etc/prometheus:ro");
        for (String rules : (List<String>) config.get("rule_files")) {
            assertThat(rules).startsWith("/etc/prometheus/");
            assertThat(ROOT.resolve("deploy/prometheus").resolve(rules.substring("/etc/prometheus/".length()))).exists();
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void grafanaProvisionsTheDashboardFromWhereComposeMountsItOnTheDatasourceItNames() throws IOException {
        List<String> mounts = (List<String>) services().get("grafana").get("volumes");
        Map<String, Object> providers = yaml("deploy/grafana/provisioning/dashboards/waterline.yml");
        String path = (String) ((Map<String, Object>) ((List<Map<String, Object>>) providers.get("providers")).getFirst()
                .get("options")).get("path");
        assertThat(mounts).contains("./deploy/grafana/dashboards:" + path + ":ro", "./deploy/grafana/provisioning:/etc/grafana/provisioning:ro");

        Map<String, Object> datasources = yaml("deploy/grafana/provisioning/datasources/prometheus.yml");
        Map<String, Object> prometheus = ((List<Map<String, Object>>) datasources.get("datasources")).getFirst();
        assertThat(prometheus.get("url")).isEqualTo("http://prometheus:9090");
        JsonNode dashboard = JsonMapper.builder().build().readTree(ROOT.resolve("deploy/grafana/dashboards/waterline.json").toFile());
        List<String> uids = new ArrayList<>();
        dashboard.findValues("datasource").forEach(d -> uids.add(d.path("uid").asString()));
        assertThat(uids).isNotEmpty().allMatch(prometheus.get("uid")::equals);
    }

    @Test
    void theImageBuildsOnTemurin21ByDefaultRunsAsAUserAndChecksReadiness() throws IOException {
        String dockerfile = Files.readString(ROOT.resolve("Dockerfile"));
        assertThat(dockerfile).contains("ARG JDK_IMAGE=eclipse-temurin:21-jdk", "ARG JRE_IMAGE=eclipse-temurin:21-jre",
                "FROM ${JDK_IMAGE} AS build", "FROM ${JRE_IMAGE}", "./mvnw", "-Djarmode=tools", "extract --layers",
                "/actuator/health/readiness", "-XX:MaxRAMPercentage=", "-XX:+ExitOnOutOfMemoryError");
        Matcher user = Pattern.compile("(?m)^USER (\\S+)").matcher(dockerfile);
        assertThat(user.find()).as("a USER line").isTrue();
        assertThat(user.group(1)).isNotIn("root", "0");
        assertThat(dockerfile).containsPattern("(?m)^HEALTHCHECK ");
        List<String> ignored = Files.readAllLines(ROOT.resolve(".dockerignore"));
        assertThat(ignored).as("the context is what the build needs, no target/ or .git").contains("*", "!src/main", "!pom.xml");
        assertThat(ignored).as("the contract the server serves is in the context").contains("!docs/PROTOCOL.md", "!docs/asyncapi.yaml");
        assertThat(dockerfile).as("and in the build stage").contains("COPY docs/PROTOCOL.md docs/asyncapi.yaml docs/");
    }

    static Duration defaultOf(Class<? extends Record> type, String component) throws NoSuchMethodException {
        RecordComponent[] components = type.getRecordComponents();
        Constructor<?> canonical = type.getDeclaredConstructor(Arrays.stream(components).map(RecordComponent::getType).toArray(Class[]::new));
        for (int i = 0; i < components.length; i++) {
            if (components[i].getName().equals(component)) {
                return DurationStyle.detectAndParse(canonical.getParameters()[i].getAnnotation(DefaultValue.class).value()[0]);
            }
        }
        throw new IllegalArgumentException(component);
    }
}
