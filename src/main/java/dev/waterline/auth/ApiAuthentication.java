package dev.waterline.auth;

import java.util.Optional;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.servlet.HandlerInterceptor;

/**
 * Authenticates every {@code /api/**} call except the dev-token endpoint: a valid
 * {@code Authorization: Bearer} token (or, on an endpoint marked {@link QueryToken} and without that
 * header, the {@code access_token} query parameter) or 401. Controllers read the user with {@link #userId}.
 */
@Component
public class ApiAuthentication implements HandlerInterceptor {

    private static final String USER = ApiAuthentication.class.getName() + ".user";
    private static final String GOOD_UNTIL = ApiAuthentication.class.getName() + ".goodUntil";

    private final Tokens tokens;

    public ApiAuthentication(Tokens tokens) {
        this.tokens = tokens;
    }

    @Override
    public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler) throws Exception {
        String header = request.getHeader(HttpHeaders.AUTHORIZATION);
        Optional<String> token = bearer(header);
        if (header == null && handler instanceof org.springframework.web.method.HandlerMethod m
                && m.hasMethodAnnotation(QueryToken.class)) {
            token = Optional.ofNullable(request.getParameter("access_token"));
        }
        Optional<Principal> user = token.flatMap(tokens::verify);
        if (user.isEmpty()) {
            response.setStatus(HttpServletResponse.SC_UNAUTHORIZED);
            response.setHeader(HttpHeaders.WWW_AUTHENTICATE, "Bearer");
            response.setContentType(MediaType.APPLICATION_JSON_VALUE);
            response.getWriter().write("{\"error\":\"unauthorized\",\"message\":\"missing, malformed, forged or expired bearer token\"}");
            return false;
        }
        request.setAttribute(USER, user.get().userId());
        request.setAttribute(GOOD_UNTIL, user.get().goodUntilMillis());
        return true;
    }

    /**
     * The token inside an {@code Authorization: Bearer ...} header value (the whitespace around
     * it is the header's, not the token's; the token itself must then be canonical).
     */
    public static Optional<String> bearer(String header) {
        if (header == null || header.length() < 7 || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return Optional.empty();
        }
        return Optional.of(header.substring(7).strip());
    }

    /** The authenticated user of this request, or null when it was not authenticated. */
    public static String userIdOrNull(HttpServletRequest request) {
        return (String) request.getAttribute(USER);
    }

    /**
     * Until when (epoch ms, the clock skew included) the token that authenticated this request is
     * good: a long-lived answer (server-sent events) ends then, as a WebSocket session does (4001).
     */
    public static long goodUntilMillis(HttpServletRequest request) {
        Object until = request.getAttribute(GOOD_UNTIL);
        if (until == null) {
            throw new IllegalStateException("request was not authenticated");
        }
        return (Long) until;
    }

    public static String userId(HttpServletRequest request) {
        Object user = request.getAttribute(USER);
        if (user == null) {
            throw new IllegalStateException("request was not authenticated");
        }
        return (String) user;
    }
}
