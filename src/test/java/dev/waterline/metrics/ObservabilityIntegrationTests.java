package dev.waterline.metrics;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.waterline.support.Api;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.yaml.snakeyaml.Yaml;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The operations surface as an operator meets it: every series the alert rules
 * ({@code deploy/prometheus/alerts.yml}) and the Grafana dashboard
 * ({@code deploy/grafana/dashboards/waterline.json}) query is exported by a running server; the
 * latency histograms resolve 1 ms to 10 s; no label of ours carries a user, chat or hook id; and
 * actuator exposes health, info and prometheus only.
 */
@WaterlineIntegrationTest
class ObservabilityIntegrationTests {

    private static final Pattern SERIES = Pattern.compile("\\b((?:waterline|jvm|hikaricp|process)_[a-z0-9_]+)\\b");
    /** Labels our own series may carry: none of them names a user, a chat or a hook. */
    private static final Set<String> ALLOWED_LABELS = Set.of("path", "reason", "reaper", "loop", "writer", "le", "quantile",
            "how", "outcome", "kind", "direction", "at", "by", "state");

    @LocalServerPort
    int port;

    String scrape() throws Exception {
        var http = java.net.http.HttpClient.newHttpClient();
        var r = http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + port + "/actuator/prometheus")).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        return r.body();
    }

    static Set<String> exported(String scrape) {
        Set<String> names = new TreeSet<>();
        for (String line : scrape.split("\n")) {
            if (!line.isBlank() && !line.startsWith("#")) {
                int end = line.indexOf('{') >= 0 ? line.indexOf('{') : line.indexOf(' ');
                names.add(line.substring(0, end));
            }
        }
        return names;
    }

    static Set<String> queried(List<String> expressions) {
        Set<String> names = new TreeSet<>();
        for (String e : expressions) {
            Matcher m = SERIES.matcher(e);
            while (m.find()) {
                names.add(m.group(1));
            }
        }
        return names;
    }

    static List<String> alertExpressions() throws Exception {
        List<String> exprs = new ArrayList<>();
        try (InputStream in = Files.newInputStream(Path.of("deploy/prometheus/alerts.yml"))) {
            Map<String, Object> doc = new Yaml().load(in);
            for (Object group : (List<?>) doc.get("groups")) {
                for (Object rule : (List<?>) ((Map<?, ?>) group).get("rules")) {
                    exprs.add(String.valueOf(((Map<?, ?>) rule).get("expr")));
                }
            }
        }
        return exprs;
    }

    static List<String> dashboardExpressions() throws Exception {
        JsonNode dashboard = Api.JSON.readTree(Files.readString(Path.of("deploy/grafana/dashboards/waterline.json")));
        List<String> exprs = new ArrayList<>();
        for (JsonNode panel : dashboard.get("panels")) {
            for (JsonNode target : panel.path("targets")) {
                exprs.add(target.get("expr").asString());
            }
        }
        return exprs;
    }

    @Test
    void everySeriesTheAlertRulesAndTheDashboardQueryIsExported() throws Exception {
        Set<String> exported = exported(scrape());
        List<String> alerts = alertExpressions();
        List<String> panels = dashboardExpressions();
        assertThat(alerts).hasSizeGreaterThanOrEqualTo(6);
        assertThat(panels).hasSizeGreaterThanOrEqualTo(20);
        assertThat(queried(alerts)).as("alert rules").isSubsetOf(exported);
        assertThat(queried(panels)).as("dashboard").isSubsetOf(exported);
    }

    @Test
    void theLatencyHistogramsResolveOneMillisecondToTenSecondsAndThePollersLeaseBeyond() throws Exception {
        String scrape = scrape();
        for (String series : List.of("waterline_send_accept_seconds_bucket{", "waterline_delivery_seconds_bucket{path=\"fast\"",
                "waterline_delivery_seconds_bucket{path=\"poller\"")) {
            assertThat(scrape).contains(series);
        }
        assertThat(scrape).containsPattern("waterline_send_accept_seconds_bucket\\{le=\"0\\.001\"\\}")
                .containsPattern("waterline_send_accept_seconds_bucket\\{le=\"10\\.0\"\\}")
                // a poller delivery comes one lease (10 s by default) after the commit at the earliest
                .containsPattern("waterline_delivery_seconds_bucket\\{path=\"poller\",le=\"30\\.0\"\\}");
    }

    @Test
    void noLabelOfOursCarriesAUserAChatOrAHookIdAfterRealTraffic() throws Exception {
        Api api = new Api(port);
        Api.Pair pair = api.pair("obs-labels");
        try (WsClient alice = WsClient.connectWelcomed(port, pair.alice()); WsClient bob = WsClient.connectWelcomed(port, pair.bob())) {
            alice.sendMessage("obs-1", pair.chat(), "hello");
            assertThat(alice.answer("obs-1").get("type").asString()).isEqualTo("accepted");
            bob.ack(bob.next("message").get("deliveryId").asLong());
            alice.sendMessage("obs-2", "no-such-chat-" + pair.chat(), "refused");
            assertThat(alice.answer("obs-2").get("code").asString()).isEqualTo("not_found");
            alice.sendRaw("{\"type\":\"nonsense\"}");
            alice.next("error");
        }
        Map<String, Set<String>> values = new java.util.TreeMap<>();
        Pattern label = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"([^\"]*)\"");
        for (String line : scrape().split("\n")) {
            if (line.startsWith("waterline_") && line.contains("{")) {
                Matcher m = label.matcher(line.substring(line.indexOf('{'), line.lastIndexOf('}') + 1));
                while (m.find()) {
                    values.computeIfAbsent(m.group(1), k -> new TreeSet<>()).add(m.group(2));
                }
            }
        }
        assertThat(values.keySet()).isNotEmpty().isSubsetOf(ALLOWED_LABELS);
        assertThat(values.get("path")).isSubsetOf("fast", "poller");
        // a send's reject reasons, why a typing frame was dropped (waterline_typing_dropped_total), and a
        // presence announcement or push (waterline_presence_dropped_total)
        Set<String> reasons = new TreeSet<>(List.of(WaterlineMetrics.REJECT_REASONS));
        reasons.addAll(List.of("coalesced", "pressure", "rate", "queue", "backlog", "unavailable", "inbox"));
        assertThat(values.get("reason")).isSubsetOf(reasons);
        assertThat(values.get("reaper")).isSubsetOf(WaterlineMetrics.REAPERS);
        assertThat(values.get("writer")).isSubsetOf("ingest", "receipts", "acks", "stream_append");
        assertThat(values.getOrDefault("how", Set.of())).isSubsetOf("complete", "aborted", "idle");
        assertThat(values.getOrDefault("direction", Set.of())).isSubsetOf("in", "out");
        assertThat(values.getOrDefault("state", Set.of())).as("presence announced").isSubsetOf("online", "offline");
        assertThat(values.get("kind")).as("hook kinds, registered at start").containsExactlyInAnyOrder("http", "amqp", "mqtt", "nats", "kafka", "redis");
        assertThat(values.getOrDefault("outcome", Set.of())).allMatch(v -> v.matches("[a-z][a-z_]{1,31}"), "an outcome code");
        // loop names are the code's own: short snake_case words, none of them an id of the traffic above
        assertThat(values.get("loop")).allMatch(v -> v.matches("[a-z][a-z_]{1,31}"), "a loop name")
                .noneMatch(v -> v.contains("obs") || v.contains(pair.chat().toLowerCase(java.util.Locale.ROOT)));
        assertThat(values.get("le")).allMatch(v -> v.equals("+Inf") || v.matches("[0-9.]+"), "a bucket bound");
    }

    @Test
    void actuatorExposesHealthInfoAndPrometheusOnly() throws Exception {
        Api api = new Api(port);
        JsonNode links = api.get("/actuator", null).body().get("_links");
        Set<String> exposed = new TreeSet<>();
        links.propertyNames().forEach(exposed::add);
        assertThat(exposed).allMatch(name -> name.equals("self") || name.startsWith("health") || name.equals("info")
                || name.equals("prometheus"));
        for (String hidden : List.of("/actuator/env", "/actuator/heapdump", "/actuator/threaddump", "/actuator/configprops",
                "/actuator/beans", "/actuator/metrics")) {
            assertThat(api.get(hidden, null).status()).as(hidden).isEqualTo(404);
        }
        assertThat(api.get("/actuator/health/liveness", null).status()).isEqualTo(200);
        assertThat(api.get("/actuator/health/readiness", null).status()).isEqualTo(200);
    }
}
