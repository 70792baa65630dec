package dev.waterline.gateway;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import dev.waterline.support.Api;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.web.servlet.handler.SimpleUrlHandlerMapping;
import org.springframework.web.servlet.mvc.method.RequestMappingInfoHandlerMapping;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.socket.server.support.WebSocketHttpRequestHandler;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The wire contract in the repository, held against the server that runs: {@code docs/PROTOCOL.md}
 * and {@code docs/asyncapi.yaml} list as served exactly the frame types the server reads (its frame
 * handlers) and writes (every frame type its code builds), and exactly the paths it maps; what
 * they mark <em>planned (not served yet)</em> is not served, and is answered as the page says
 * (an {@code invalid} error frame, a 404 or 405).
 * <p>
 * How the page is read: an endpoint is a code span {@code `VERB /path`} anywhere in it; a frame
 * is the first cell of a row of a table headed {@code client frame} or {@code server frame}. Either
 * is planned when its table row, list item or paragraph, or its section heading, says "planned (not
 * served yet)"; one served mention anywhere makes it served.
 */
@WaterlineIntegrationTest
class ContractIntegrationTests {

    static final Path PROTOCOL = Path.of("docs/PROTOCOL.md");
    static final Path ASYNCAPI = Path.of("docs/asyncapi.yaml");
    static final String PLANNED = "planned (not served yet)";

    @LocalServerPort
    int port;

    @Autowired
    GatewayHandler gateway;

    @Autowired
    List<RequestMappingHandlerMapping> controllers;

    /** Controllers and the actuator's endpoints alike. */
    @Autowired
    List<RequestMappingInfoHandlerMapping> allMappings;

    @Autowired
    List<SimpleUrlHandlerMapping> urlMappings;

    @Test
    void theFrameTypesTheServerReadsAreExactlyThoseThePageAndTheAsyncApiFileListAsServed() throws IOException {
        Contract doc = Contract.read(Files.readString(PROTOCOL));
        AsyncApi api = AsyncApi.read(Files.readString(ASYNCAPI));
        Set<String> read = new TreeSet<>(gateway.frameTypes());

        assertThat(doc.clientFrames().served()).as("client frames PROTOCOL.md lists as served").isEqualTo(read);
        assertThat(api.received().served()).as("client frames asyncapi.yaml lists as served").isEqualTo(read);
        assertThat(doc.clientFrames().planned()).as("client frames PROTOCOL.md marks planned").doesNotContainAnyElementsOf(read)
                .isEqualTo(api.received().planned());
    }

    @Test
    void theFrameTypesTheServerWritesAreExactlyThoseThePageAndTheAsyncApiFileListAsServed() throws IOException {
        Contract doc = Contract.read(Files.readString(PROTOCOL));
        AsyncApi api = AsyncApi.read(Files.readString(ASYNCAPI));
        Set<String> written = framesWrittenByTheServer();

        assertThat(written).as("the scan of the code finds the frames it must (else the scan is broken)")
                .contains("welcome", "accepted", "message", "error", "pong", "chunk");
        assertThat(doc.serverFrames().served()).as("server frames PROTOCOL.md lists as served").isEqualTo(written);
        assertThat(api.sent().served()).as("server frames asyncapi.yaml lists as served").isEqualTo(written);
        assertThat(doc.serverFrames().planned()).as("server frames PROTOCOL.md marks planned").doesNotContainAnyElementsOf(written)
                .isEqualTo(api.sent().planned());
    }

    @Test
    void theErrorCodesOfFramesAreTheSameOnThePageAndInTheAsyncApiFile() throws IOException {
        Contract doc = Contract.read(Files.readString(PROTOCOL));
        AsyncApi api = AsyncApi.read(Files.readString(ASYNCAPI));
        assertThat(doc.frameErrorCodes()).isNotEmpty().isEqualTo(api.errorCodes());
    }

    @Test
    void everyPathTheServerServesIsOnThePageAsServedAndEveryPathThePageListsAsServedIsMapped() throws IOException {
        Contract doc = Contract.read(Files.readString(PROTOCOL));
        Set<String> served = new TreeSet<>(webSocketEndpoints());
        controllers.forEach(m -> m.getHandlerMethods().forEach((info, method) -> info.getPatternValues().stream()
                .filter(p -> !p.equals("/error"))   // the container's error dispatch, never called by a client
                .forEach(p -> info.getMethodsCondition().getMethods().forEach(v -> served.add(v.name() + " " + p)))));
        Set<String> mapped = new TreeSet<>(served);
        allMappings.forEach(m -> m.getHandlerMethods().forEach((info, method) -> info.getPatternValues()
                .forEach(p -> info.getMethodsCondition().getMethods().forEach(v -> mapped.add(v.name() + " " + p)))));

        assertThat(served).as("the server's paths (is the scan of the mappings broken?)")
                .contains("GET /ws", "POST /api/chats", "GET /api/chats/{chatId}/messages");
        assertThat(difference(served, doc.endpoints().served())).as("served, but not on PROTOCOL.md as served").isEmpty();
        assertThat(difference(doc.endpoints().served(), mapped)).as("on PROTOCOL.md as served, but not mapped").isEmpty();
        assertThat(doc.endpoints().planned()).as("on PROTOCOL.md as planned, but mapped").doesNotContainAnyElementsOf(mapped);
    }

    @Test
    void everyPathThePageMarksPlannedIsAnsweredAsThePageSaysToday() throws Exception {
        Contract doc = Contract.read(Files.readString(PROTOCOL));
        assertThat(doc.endpoints().planned()).as("planned paths").hasSizeGreaterThan(10);
        Api api = new Api(port);
        String token = api.token("contract-alice");
        String chat = api.createChat(token, "contract-bob");
        HttpClient http = HttpClient.newHttpClient();
        SoftAssertions softly = new SoftAssertions();
        for (String endpoint : doc.endpoints().planned()) {
            String[] verbAndPath = endpoint.split(" ", 2);
            String path = verbAndPath[1].replace("{chatId}", chat).replaceAll("\\{[^}]+}", "contract-x");
            HttpRequest.BodyPublisher body = verbAndPath[0].equals("GET") || verbAndPath[0].equals("DELETE")
                    ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString("{}");
            HttpResponse<String> answer = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                    .method(verbAndPath[0], body).header("Authorization", "Bearer " + token)
                    .header("Content-Type", "application/json").build(), HttpResponse.BodyHandlers.ofString());
            Set<Integer> today = doc.todayFor(endpoint);
            softly.assertThat(answer.statusCode()).as(endpoint + " today (" + answer.body() + ")").isIn(today.toArray());
        }
        softly.assertAll();
    }

    @Test
    void everyClientFrameThePageMarksPlannedIsAnsweredInvalidAndTheConnectionStaysOpen() throws IOException {
        Contract doc = Contract.read(Files.readString(PROTOCOL));
        Api api = new Api(port);
        String token = api.token("contract-carol");
        String chat = api.createChat(token, "contract-dave");
        try (WsClient ws = WsClient.connectWelcomed(port, token)) {
            for (String type : doc.clientFrames().planned()) {
                Map<String, Object> frame = new LinkedHashMap<>();
                frame.put("type", type);
                frame.put("correlationId", "contract-" + type);
                frame.put("chatId", chat);
                frame.put("messageId", "01CONTRACT0000000000000000");
                frame.put("body", "changed");
                frame.put("emoji", "+1");
                frame.put("on", true);
                ws.send(frame);
                JsonNode error = ws.next("error");
                assertThat(error.path("code").asString()).as(type).isEqualTo("invalid");
                assertThat(error.path("message").asString()).as(type).contains("unknown type");
            }
            ws.send(Map.of("type", "ping"));
            ws.next("pong");
        }
    }

    @Test
    void severalFramesInOneMessageAreOneMalformedFrameTodayAsThePageSays() {
        Api api = new Api(port);
        try (WsClient ws = WsClient.connectWelcomed(port, api.token("contract-erin"))) {
            ws.sendRaw("{\"type\":\"ping\"}\n{\"type\":\"ping\"}");
            ws.sendRaw("{\"type\":\"ping\"}");
            ws.next("pong");
            // frames are answered in order: by the lone ping's pong the batch was answered too
            List<String> types = ws.received().stream().map(f -> f.path("type").asString()).filter(t -> !t.equals("welcome")).toList();
            assertThat(types).containsExactly("error", "pong");
            assertThat(ws.received().stream().filter(f -> f.path("type").asString().equals("error")).findFirst().orElseThrow()
                    .path("code").asString()).isEqualTo("invalid");
        }
    }

    /** GET of the paths the WebSocket handler is mapped to. */
    private Set<String> webSocketEndpoints() {
        Set<String> out = new TreeSet<>();
        urlMappings.forEach(m -> m.getUrlMap().forEach((url, handler) -> {
            if (handler instanceof WebSocketHttpRequestHandler) {
                out.add("GET " + url);
            }
        }));
        return out;
    }

    private static Set<String> difference(Set<String> a, Set<String> b) {
        Set<String> d = new TreeSet<>(a);
        d.removeAll(b);
        return d;
    }

    /**
     * Every frame {@code type} the server's code writes, found the ways the code builds frames: a
     * record whose first component is {@code String type}, constructed with a literal; a
     * {@code "type"} property written or put with a literal; a frame written as a JSON literal.
     */
    static Set<String> framesWrittenByTheServer() throws IOException {
        List<String> sources = new ArrayList<>();
        try (Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                sources.add(Files.readString(f));
            }
        }
        Set<String> types = new TreeSet<>();
        Pattern property = Pattern.compile("(?:writeStringProperty|put)\\(\"type\", \"(\\w+)\"\\)");
        Pattern literal = Pattern.compile("\\\\\"type\\\\\":\\\\\"(\\w+)\\\\\"");
        Pattern frameRecord = Pattern.compile("record (\\w+)\\(String type\\b");
        Set<String> records = new TreeSet<>();
        for (String s : sources) {
            Stream.of(property, literal).forEach(p -> p.matcher(s).results().forEach(r -> types.add(r.group(1))));
            frameRecord.matcher(s).results().forEach(r -> records.add(r.group(1)));
        }
        for (String record : records) {
            Pattern made = Pattern.compile("new " + record + "\\(\"(\\w+)\"");
            sources.forEach(s -> made.matcher(s).results().forEach(r -> types.add(r.group(1))));
        }
        return types;
    }

    /** Names listed as served, and those listed only as planned. */
    record Listed(Set<String> served, Set<String> planned) {
    }

    /** What docs/PROTOCOL.md lists: endpoints, frames by direction, frame error codes. */
    record Contract(Listed endpoints, Listed clientFrames, Listed serverFrames, Set<String> frameErrorCodes,
                    Map<String, String> blockOfPlanned) {

        static final Pattern ENDPOINT = Pattern.compile("`(GET|POST|PUT|PATCH|DELETE) (/[^`\\s?]*)");
        static final Pattern CODE = Pattern.compile("`([a-z_]+)`");
        static final Pattern STATUS = Pattern.compile("`(\\d{3})");

        static Contract read(String markdown) {
            Map<String, Boolean> endpoints = new TreeMap<>();
            Map<String, Boolean> client = new TreeMap<>();
            Map<String, Boolean> server = new TreeMap<>();
            Set<String> errorCodes = new TreeSet<>();
            Map<String, String> blockOfPlanned = new TreeMap<>();
            boolean sectionPlanned = false;
            boolean subsectionPlanned = false;
            String table = null;
            String lastRow = null;
            for (String block : blocks(markdown)) {
                if (block.startsWith("## ")) {
                    sectionPlanned = block.contains(PLANNED);
                    subsectionPlanned = false;
                    table = null;
                    lastRow = null;
                    continue;
                }
                if (block.startsWith("### ")) {
                    subsectionPlanned = block.contains(PLANNED);
                    table = null;
                    lastRow = null;
                    continue;
                }
                boolean planned = sectionPlanned || subsectionPlanned || block.contains(PLANNED);
                if (block.startsWith("|")) {
                    if (block.startsWith("| ---")) {
                        table = lastRow == null ? null : firstCell(lastRow);   // the row above was the header
                        continue;
                    }
                    lastRow = block;
                    String first = firstCell(block);
                    if ("client frame".equals(table) || "server frame".equals(table)) {
                        Map<String, Boolean> frames = "client frame".equals(table) ? client : server;
                        CODE.matcher(first).results().forEach(r -> frames.merge(r.group(1), planned, Boolean::logicalAnd));
                    }
                    else if ("frame error code".equals(table)) {
                        CODE.matcher(first).results().forEach(r -> errorCodes.add(r.group(1)));
                    }
                }
                else {
                    table = null;
                    lastRow = null;
                }
                Matcher m = ENDPOINT.matcher(block);
                while (m.find()) {
                    String endpoint = m.group(1) + " " + m.group(2);
                    endpoints.merge(endpoint, planned, Boolean::logicalAnd);
                    if (planned) {
                        blockOfPlanned.merge(endpoint, block, (a, b) -> a + "\n" + b);
                    }
                }
            }
            return new Contract(listed(endpoints), listed(client), listed(server), errorCodes, blockOfPlanned);
        }

        /**
         * The status a planned endpoint answers today: the one stated where it is listed (a block
         * that names one status after the word "today"), else 404 or 405.
         */
        Set<Integer> todayFor(String endpoint) {
            Set<Integer> stated = new TreeSet<>();
            for (String block : blockOfPlanned.getOrDefault(endpoint, "").split("\n")) {
                int today = block.toLowerCase(Locale.ROOT).indexOf("today");
                Set<Integer> here = new TreeSet<>();
                if (today >= 0) {
                    STATUS.matcher(block.substring(today)).results().forEach(r -> here.add(Integer.parseInt(r.group(1))));
                }
                if (here.size() == 1) {
                    stated.addAll(here);
                }
            }
            return stated.isEmpty() ? Set.of(404, 405) : stated;
        }

        private static String firstCell(String row) {
            int end = row.indexOf('|', 1);
            return row.substring(1, end < 0 ? row.length() : end).strip();
        }

        private static Listed listed(Map<String, Boolean> plannedByName) {
            Set<String> served = new TreeSet<>();
            Set<String> planned = new TreeSet<>();
            plannedByName.forEach((name, p) -> (p ? planned : served).add(name));
            return new Listed(served, planned);
        }

        /**
         * The page cut into blocks: a heading, a table row, a list item with its continuation
         * lines, or a paragraph.
         */
        static List<String> blocks(String markdown) {
            List<String> out = new ArrayList<>();
            StringBuilder current = new StringBuilder();
            for (String line : markdown.split("\n", -1)) {
                boolean starts = line.isBlank() || line.startsWith("#") || line.startsWith("|") || line.startsWith("- ")
                        || line.matches("\\d+\\. .*");
                if (starts && !current.isEmpty()) {
                    out.add(current.toString());
                    current.setLength(0);
                }
                if (!line.isBlank()) {
                    current.append(current.isEmpty() ? "" : " ").append(line.strip());
                }
                if (line.startsWith("|") || line.startsWith("#")) {
                    out.add(current.toString());
                    current.setLength(0);
                }
            }
            if (!current.isEmpty()) {
                out.add(current.toString());
            }
            return out;
        }
    }

    /** What docs/asyncapi.yaml lists: frame types the server receives and sends, and the error codes. */
    record AsyncApi(Listed received, Listed sent, Set<String> errorCodes) {

        @SuppressWarnings("unchecked")
        static AsyncApi read(String yaml) {
            Map<String, Object> doc = new Yaml(new SafeConstructor(new LoaderOptions())).load(yaml);
            assertThat(doc.get("asyncapi")).isEqualTo("3.0.0");
            Map<String, Boolean> received = new TreeMap<>();
            Map<String, Boolean> sent = new TreeMap<>();
            Map<String, Object> operations = (Map<String, Object>) doc.get("operations");
            operations.forEach((name, o) -> {
                Map<String, Object> operation = (Map<String, Object>) o;
                Map<String, Boolean> into = switch ((String) operation.get("action")) {
                    case "receive" -> received;
                    case "send" -> sent;
                    default -> throw new AssertionError(name + ": action " + operation.get("action"));
                };
                for (Object ref : (List<Object>) operation.get("messages")) {
                    Map<String, Object> message = (Map<String, Object>) resolve(doc, (Map<String, Object>) ref);
                    Map<String, Object> payload = (Map<String, Object>) message.get("payload");
                    Object type = ((Map<String, Object>) ((Map<String, Object>) payload.get("properties")).get("type")).get("const");
                    into.merge((String) type, "planned".equals(message.get("x-waterline-status")), Boolean::logicalAnd);
                }
            });
            Map<String, Object> errorCode = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) doc.get("components"))
                    .get("schemas")).get("errorCode");
            return new AsyncApi(Contract.listed(received), Contract.listed(sent), new TreeSet<>((List<String>) errorCode.get("enum")));
        }

        /** Follows {@code $ref}s (local JSON pointers) until an object without one. */
        @SuppressWarnings("unchecked")
        static Object resolve(Map<String, Object> doc, Map<String, Object> node) {
            Map<String, Object> at = node;
            while (at.get("$ref") instanceof String ref) {
                assertThat(ref).startsWith("#/");
                Object o = doc;
                for (String part : ref.substring(2).split("/")) {
                    o = ((Map<String, Object>) o).get(part.replace("~1", "/").replace("~0", "~"));
                    if (o == null) {
                        throw new UncheckedIOException(new IOException("unresolved " + ref));
                    }
                }
                at = (Map<String, Object>) o;
            }
            return at;
        }
    }
}
