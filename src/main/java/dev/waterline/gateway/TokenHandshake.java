package dev.waterline.gateway;

import java.util.Map;
import java.util.Optional;

import dev.waterline.auth.ApiAuthentication;
import dev.waterline.auth.Principal;
import dev.waterline.auth.Tokens;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.ServerHttpRequest;
import org.springframework.http.server.ServerHttpResponse;
import org.springframework.web.socket.WebSocketHandler;
import org.springframework.web.socket.server.HandshakeInterceptor;
import org.springframework.web.util.UriComponentsBuilder;

/** Refuses the upgrade with 401 unless the request carries a valid token (header, or {@code access_token} for browsers). */
class TokenHandshake implements HandshakeInterceptor {

    static final String USER = "waterline.userId";
    static final String GOOD_UNTIL = "waterline.tokenGoodUntil";

    private final Tokens tokens;

    TokenHandshake(Tokens tokens) {
        this.tokens = tokens;
    }

    @Override
    public boolean beforeHandshake(ServerHttpRequest request, ServerHttpResponse response, WebSocketHandler handler,
                                   Map<String, Object> attributes) {
        Optional<String> token = ApiAuthentication.bearer(request.getHeaders().getFirst(HttpHeaders.AUTHORIZATION));
        if (token.isEmpty()) {
            token = Optional.ofNullable(UriComponentsBuilder.fromUri(request.getURI()).build()
                    .getQueryParams().getFirst("access_token"));
        }
        Optional<Principal> user = token.flatMap(tokens::verify);
        if (user.isEmpty()) {
            response.setStatusCode(HttpStatus.UNAUTHORIZED);
            response.getHeaders().set(HttpHeaders.WWW_AUTHENTICATE, "Bearer");
            return false;
        }
        attributes.put(USER, user.get().userId());
        attributes.put(GOOD_UNTIL, user.get().goodUntilMillis());
        return true;
    }

    @Override
    public void afterHandshake(ServerHttpRequest request, ServerHttpResponse response, WebSocketHandler handler,
                               Exception exception) {
    }
}
