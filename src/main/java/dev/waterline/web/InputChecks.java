package dev.waterline.web;

import java.lang.reflect.Type;
import java.util.Map;

import dev.waterline.input.InputGate;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.core.MethodParameter;
import org.springframework.http.HttpInputMessage;
import org.springframework.http.converter.HttpMessageConverter;
import org.springframework.stereotype.Component;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.servlet.mvc.method.annotation.RequestBodyAdviceAdapter;
import tools.jackson.databind.JsonNode;

/**
 * The input gate for REST ({@link InputGate}), applied to every request before any controller
 * sees it, so that no endpoint, today's or tomorrow's, can forget it: every query parameter
 * (name and value) must be acceptable text, every path variable an acceptable id, and every
 * string in a JSON body, field names included, acceptable text. Anything else is
 * {@code 400 {"error":"invalid"}}.
 */
final class InputChecks {

    private InputChecks() {
    }

    /** Parameters and path variables. */
    @Component
    static class Parameters implements HandlerInterceptor {

        static final int MAX_PATH_VARIABLE = 128;

        @Override
        public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler) {
            for (Map.Entry<String, String[]> p : request.getParameterMap().entrySet()) {
                check("parameter name", p.getKey());
                for (String v : p.getValue()) {
                    check("parameter " + InputGate.abbreviate(p.getKey(), 32), v);
                }
            }
            if (request.getAttribute(HandlerMapping.URI_TEMPLATE_VARIABLES_ATTRIBUTE) instanceof Map<?, ?> vars) {
                for (Map.Entry<?, ?> v : vars.entrySet()) {
                    String problem = InputGate.idProblem(String.valueOf(v.getValue()), 1, MAX_PATH_VARIABLE);
                    if (problem != null) {
                        throw ApiException.invalid("path variable " + v.getKey() + " " + problem);
                    }
                }
            }
            return true;
        }

        private static void check(String what, String value) {
            String problem = InputGate.textProblem(value);
            if (problem != null) {
                throw ApiException.invalid(what + " " + problem);
            }
        }
    }

    /**
     * Refuses to start when an endpoint reads its body as anything the gate does not see: only a
     * JSON tree ({@link JsonNode}, every string of which {@link Bodies} checks) or raw bytes
     * ({@code byte[]}: binary, not text) may be a body, as {@code @RequestBody} or as the body of
     * an {@code HttpEntity}. A record or a {@code String} body would reach its controller unchecked.
     */
    @Component
    static class BodyTypes {

        private static final java.util.Set<Class<?>> ALLOWED = java.util.Set.of(JsonNode.class, byte[].class);

        BodyTypes(java.util.List<org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping> mappings) {
            for (var mapping : mappings) {
                mapping.getHandlerMethods().forEach((info, method) -> {
                    for (MethodParameter p : method.getMethodParameters()) {
                        Class<?> body = null;
                        if (p.hasParameterAnnotation(org.springframework.web.bind.annotation.RequestBody.class)) {
                            body = p.getParameterType();
                        }
                        else if (org.springframework.http.HttpEntity.class.isAssignableFrom(p.getParameterType())) {
                            body = org.springframework.core.ResolvableType.forMethodParameter(p).as(
                                    org.springframework.http.HttpEntity.class).getGeneric(0).resolve(Object.class);
                        }
                        else if (java.io.InputStream.class.isAssignableFrom(p.getParameterType())
                                || java.io.Reader.class.isAssignableFrom(p.getParameterType())
                                || jakarta.servlet.http.Part.class.isAssignableFrom(p.getParameterType())
                                || p.getParameterType().getName().equals("org.springframework.web.multipart.MultipartFile")
                                || p.hasParameterAnnotation(org.springframework.web.bind.annotation.RequestPart.class)) {
                            body = p.getParameterType();
                        }
                        Class<?> read = body;
                        if (read != null && ALLOWED.stream().noneMatch(a -> a.isAssignableFrom(read))) {
                            throw new IllegalStateException(method + " reads its body as " + read.getName()
                                    + ", which the input gate does not check: take a JsonNode (or raw bytes)");
                        }
                    }
                });
            }
        }
    }

    /** JSON bodies, as read, before the controller gets them. */
    @ControllerAdvice
    static class Bodies extends RequestBodyAdviceAdapter {

        @Override
        public boolean supports(MethodParameter parameter, Type targetType,
                                Class<? extends HttpMessageConverter<?>> converterType) {
            return targetType instanceof Class<?> c && JsonNode.class.isAssignableFrom(c);
        }

        @Override
        public Object afterBodyRead(Object body, HttpInputMessage input, MethodParameter parameter, Type targetType,
                                    Class<? extends HttpMessageConverter<?>> converterType) {
            String problem = InputGate.treeProblem((JsonNode) body);
            if (problem != null) {
                throw ApiException.invalid("refused: " + problem + " (docs/PROTOCOL.md §3)");
            }
            return body;
        }
    }
}
