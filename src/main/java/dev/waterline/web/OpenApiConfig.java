package dev.waterline.web;

import java.util.Map;

import io.swagger.v3.oas.models.Components;
import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.info.Info;
import io.swagger.v3.oas.models.media.Content;
import io.swagger.v3.oas.models.media.MediaType;
import io.swagger.v3.oas.models.media.ObjectSchema;
import io.swagger.v3.oas.models.media.Schema;
import io.swagger.v3.oas.models.media.StringSchema;
import io.swagger.v3.oas.models.responses.ApiResponse;
import io.swagger.v3.oas.models.responses.ApiResponses;
import io.swagger.v3.oas.models.security.SecurityRequirement;
import io.swagger.v3.oas.models.security.SecurityScheme;
import org.springdoc.core.customizers.GlobalOpenApiCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The OpenAPI description at {@code /v3/api-docs} (Swagger UI at {@code /swagger-ui.html}): every
 * REST endpoint, its bearer-token security, and the error answers every {@code /api/**} call may
 * get besides its own (PROTOCOL.md §1–§4), all with the one error body
 * {@code {"error":"…","message":"…"}}.
 */
@Configuration(proxyBeanMethods = false)
class OpenApiConfig {

    static final String BEARER = "bearer";
    static final String ERROR = "Error";

    @Bean
    OpenAPI waterlineOpenApi() {
        return new OpenAPI()
                .info(new Info().title("Waterline").version("v3")
                        .description("A chat backend that never loses an accepted message. REST for chats and history; "
                                + "the WebSocket /ws carries sends and deliveries, not described here: its frames are in "
                                + "[/docs/asyncapi.yaml](/docs/asyncapi.yaml) (AsyncAPI 3.0), and the whole contract, these calls "
                                + "included, in [/docs/PROTOCOL.md](/docs/PROTOCOL.md)."))
                .components(withOurComponents(new Components()));
    }

    /**
     * The bearer scheme and the error body. Added here and again by the customizer below: springdoc
     * rebuilds the components while it scans, and drops schemas no operation referenced yet.
     */
    static Components withOurComponents(Components components) {
        if (components.getSecuritySchemes() == null || !components.getSecuritySchemes().containsKey(BEARER)) {
            components.addSecuritySchemes(BEARER, new SecurityScheme().type(SecurityScheme.Type.HTTP).scheme("bearer")
                    .bearerFormat("JWT (HS256, sub = the user id)"));
        }
        if (components.getSchemas() == null || !components.getSchemas().containsKey(ERROR)) {
            components.addSchemas(ERROR, new ObjectSchema()
                    .addProperty("error", new StringSchema().description("a code: invalid, unauthorized, not_found, "
                            + "too_large, rate_limited, unavailable, internal, …"))
                    .addProperty("message", new StringSchema().description("what went wrong, for a person")));
        }
        return components;
    }

    /** The answers every API call may get, added to every operation that does not name them itself. */
    @Bean
    GlobalOpenApiCustomizer waterlineErrorAnswers() {
        Map<String, String> common = Map.of(
                "400", "invalid: malformed JSON, wrong types or lengths, text the input gate refuses",
                "413", "too_large: a body over waterline.api.max-body-bytes",
                "429", "rate_limited: over the REST rate or a membership quota (Retry-After says when to retry)",
                "500", "internal: the server failed (logged and counted)",
                "503", "unavailable: the database could not be reached, or too many requests waited for it");
        return openApi -> {
            openApi.components(withOurComponents(openApi.getComponents() == null ? new Components() : openApi.getComponents()));
            addErrorAnswers(openApi, common);
        };
    }

    private static void addErrorAnswers(OpenAPI openApi, Map<String, String> common) {
        openApi.getPaths().forEach((path, item) -> item.readOperations().forEach(op -> {
            if (!path.startsWith("/api/")) {
                return;
            }
            ApiResponses responses = op.getResponses() == null ? new ApiResponses() : op.getResponses();
            common.forEach((code, text) -> responses.putIfAbsent(code, errorAnswer(text)));
            if (!path.equals("/api/dev/tokens")) {
                responses.putIfAbsent("401", errorAnswer("unauthorized: missing, malformed, forged or expired token"));
                op.addSecurityItem(new SecurityRequirement().addList(BEARER));
            }
            if (path.contains("{chatId}")) {
                responses.putIfAbsent("404", errorAnswer("not_found: no such chat, or the caller is not a member (the same answer)"));
            }
            op.setResponses(responses);
        }));
    }

    private static ApiResponse errorAnswer(String description) {
        return new ApiResponse().description(description).content(new Content().addMediaType("application/json",
                new MediaType().schema(new Schema<>().$ref("#/components/schemas/" + ERROR))));
    }
}
