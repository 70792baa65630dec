package dev.waterline.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
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
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The API as a newcomer finds it: {@code /v3/api-docs} describes every REST endpoint the server
 * serves, with its bearer security and its error answers in the one error body; Swagger UI renders
 * it; and in the zero-configuration mode {@code /} is the browser demo, served with the JavaScript
 * client and a policy that keeps it to this origin, and {@code /start} says what the server is and
 * where to start, linking the wire contract ({@code docs/PROTOCOL.md}, {@code docs/asyncapi.yaml}), which
 * the server serves in every mode.
 */
@WaterlineIntegrationTest
class ApiSurfaceIntegrationTests {

    @LocalServerPort
    int port;

    @Autowired
    List<RequestMappingHandlerMapping> mappings;

    @Test
    void theOpenApiDescriptionCoversEveryRestEndpointWithItsErrorAnswers() {
        Api api = new Api(port);
        Api.Response docs = api.get("/v3/api-docs", null);
        assertThat(docs.status()).isEqualTo(200);
        JsonNode paths = docs.body().get("paths");

        Set<String> served = new TreeSet<>();
        mappings.forEach(m -> m.getHandlerMethods().forEach((info, method) -> info.getPatternValues().stream()
                .filter(p -> p.startsWith("/api/"))
                .forEach(p -> info.getMethodsCondition().getMethods().forEach(v -> served.add(v.name().toLowerCase() + " " + p)))));
        Set<String> described = new TreeSet<>();
        paths.properties().forEach(e -> e.getValue().propertyNames().forEach(verb -> described.add(verb + " " + e.getKey())));
        assertThat(described).containsAll(served);

        assertThat(docs.body().at("/components/schemas/Error/properties").has("error")).isTrue();
        assertThat(docs.body().at("/components/securitySchemes/bearer/scheme").asString()).isEqualTo("bearer");
        List<String> missing = new ArrayList<>();
        paths.properties().forEach(e -> e.getValue().properties().forEach(op -> {
            String path = e.getKey();
            JsonNode responses = op.getValue().get("responses");
            List<String> expected = new ArrayList<>(List.of("400", "429", "503"));
            if (!path.equals("/api/dev/tokens")) {
                expected.add("401");
            }
            if (path.contains("{chatId}")) {
                expected.add("404");
            }
            expected.stream().filter(code -> !responses.has(code)).forEach(code -> missing.add(op.getKey() + " " + path + " " + code));
        }));
        assertThat(missing).as("error answers not described").isEmpty();
        assertThat(paths.at("/~1api~1chats/get/responses/200/content/application~1json/schema/$ref").asString())
                .as("the page's shape, not bytes").endsWith("ChatPage");
    }

    @Test
    void swaggerUiRendersTheDescription() {
        Api api = new Api(port);
        Api.Response redirect = api.get("/swagger-ui.html", null);
        assertThat(redirect.status()).isEqualTo(302);
        Api.Response ui = api.get("/swagger-ui/index.html", null);
        assertThat(ui.status()).isEqualTo(200);
        assertThat(ui.text()).contains("swagger-ui");
        assertThat(api.get("/v3/api-docs/swagger-config", null).body().get("url").asString()).isEqualTo("/v3/api-docs");
    }

    @Test
    void theDemoIsServedAtTheRootWithTheClientAndAPolicyThatKeepsItToThisOrigin() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        HttpResponse<String> page = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.headers().firstValue("Content-Type").orElse("")).startsWith("text/html");
        assertThat(page.headers().firstValue("Content-Security-Policy")).contains(HomePage.DEMO_POLICY);
        assertThat(HomePage.DEMO_POLICY).contains("default-src 'none'").contains("connect-src 'self'").doesNotContain("unsafe");
        Matcher script = Pattern.compile("<script[^>]*type=\"module\"[^>]*src=\"(/demo/[^\"]+)\"").matcher(page.body());
        assertThat(script.find()).as("the page loads its module from /demo/: " + page.body()).isTrue();
        assertThat(page.body()).doesNotContainPattern("(?i)(src|href)=\"(https?:)?//");

        HttpResponse<String> app = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + script.group(1))).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(app.statusCode()).isEqualTo(200);
        assertThat(app.headers().firstValue("Content-Type").orElse("")).contains("javascript");
        HttpResponse<String> direct = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/demo/index.html")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(direct.headers().firstValue("Content-Security-Policy")).as("the page opened by its file name has the policy too")
                .contains(HomePage.DEMO_POLICY);
        HttpResponse<String> client = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/client/index.js")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(client.statusCode()).isEqualTo(200);
        assertThat(client.headers().firstValue("Content-Type").orElse("")).contains("javascript");
        assertThat(client.body()).as("the client served is the one in clients/js/src")
                .isEqualTo(Files.readString(Path.of("clients/js/src/index.js")));
        assertThat(new Api(port).get("/client/../application.properties", null).status()).isIn(400, 404);
    }

    @Test
    void theContractIsServedAsTheRepositoryHoldsItWithoutATokenAndRunsNothingInABrowser() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        Map<String, String> files = Map.of("/docs/PROTOCOL.md", "text/markdown;charset=UTF-8", "/docs/asyncapi.yaml", "application/yaml");
        for (Map.Entry<String, String> file : files.entrySet()) {
            HttpResponse<byte[]> answer = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + file.getKey())).build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            assertThat(answer.statusCode()).as(file.getKey()).isEqualTo(200);
            assertThat(answer.headers().firstValue("Content-Type")).as(file.getKey()).contains(file.getValue());
            assertThat(answer.headers().firstValue("X-Content-Type-Options")).contains("nosniff");
            assertThat(answer.headers().firstValue("Content-Security-Policy")).contains(ContractFiles.POLICY);
            assertThat(answer.body()).as(file.getKey() + " is the repository's file, as built")
                    .isEqualTo(Files.readAllBytes(Path.of(file.getKey().substring(1))));
        }
        assertThat(ContractFiles.POLICY).contains("default-src 'none'").contains("sandbox");
    }

    @Test
    void theStartPageSaysWhatThisIsAndWhereToStart() {
        Api.Response home = new Api(port).get("/start", null);
        assertThat(home.status()).isEqualTo(200);
        assertThat(home.text()).as("the descriptions: OpenAPI, and the wire contract beside it")
                .contains("href=\"/v3/api-docs\"").contains("href=\"/docs/asyncapi.yaml\"").contains("href=\"/docs/PROTOCOL.md\"");
        assertThat(home.text()).contains("Waterline").contains("/api/dev/tokens").contains("/swagger-ui.html")
                .contains("/actuator/prometheus").contains("/ws?access_token=")
                .as("the echo bot is on in the tests' zero-configuration mode").contains("/api/dev/bots/echo").contains("/events?access_token=");
    }
}
