package dev.waterline.web;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * A request whose target (path or query) holds malformed percent-encoding ({@code %} not followed
 * by two hex digits) or encodes bytes that are not UTF-8 ({@code %FF}, an overlong form, a
 * surrogate, a sequence cut short) is answered {@code 400 invalid} here, on every path, before
 * any other filter, the authentication or a handler sees it. Tomcat parses a query lazily, when
 * something first asks for a parameter, and then throws ({@code InvalidParameterException}) from
 * inside whoever asked: the input gate, the actuator's operation adapter, the WebSocket handshake.
 * That was a {@code 500} with a stack trace at ERROR, after a token was checked or not; here it is
 * one answer for all of them, logged at DEBUG (it is the client's mistake, and anyone can send it).
 * A malformed path rarely gets this far: Tomcat refuses it itself ({@link ContainerErrors} gives
 * that answer the same body); it is checked here too so that the rule does not depend on the
 * container's settings.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE)
class RequestTargets extends OncePerRequestFilter {

    private static final Log log = LogFactory.getLog(RequestTargets.class);

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        String problem = problem("path", request.getRequestURI());
        if (problem == null) {
            problem = problem("query", request.getQueryString());
        }
        if (problem != null) {
            if (log.isDebugEnabled()) {
                log.debug("refused " + request.getMethod() + " with a malformed target: " + problem);
            }
            response.setStatus(HttpServletResponse.SC_BAD_REQUEST);
            response.setContentType(MediaType.APPLICATION_JSON_VALUE);
            // the message is ours alone: nothing of the malformed text is echoed
            response.getWriter().write("{\"error\":\"invalid\",\"message\":\"malformed request: " + problem + "\"}");
            return;
        }
        chain.doFilter(request, response);
    }

    /**
     * What is wrong with the percent-encoding of {@code raw} (a path or a query as sent), or null
     * when every {@code %} starts two hex digits and the bytes they and the rest stand for are UTF-8.
     */
    static String problem(String part, String raw) {
        if (raw == null || raw.isEmpty()) {
            return null;
        }
        ByteBuffer bytes = ByteBuffer.allocate(raw.length() * 3);
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (c == '%') {
                if (i + 2 >= raw.length() || Character.digit(raw.charAt(i + 1), 16) < 0 || Character.digit(raw.charAt(i + 2), 16) < 0) {
                    return "the " + part + " has a '%' at " + i + " that is not followed by two hex digits";
                }
                bytes.put((byte) (Character.digit(raw.charAt(i + 1), 16) << 4 | Character.digit(raw.charAt(i + 2), 16)));
                i += 2;
            }
            else if (c < 0x80) {
                bytes.put((byte) c);
            }
            else {
                // a container may hand over raw bytes above ASCII as text; judged as the UTF-8 they are
                bytes.put(String.valueOf(c).getBytes(StandardCharsets.UTF_8));
            }
        }
        try {
            StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(bytes.flip());
            return null;
        }
        catch (CharacterCodingException notUtf8) {
            return "the " + part + " does not decode to UTF-8";
        }
    }
}
