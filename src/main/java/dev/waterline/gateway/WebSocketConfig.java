package dev.waterline.gateway;

import dev.waterline.auth.Tokens;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.unit.DataSize;
import org.springframework.web.socket.config.annotation.EnableWebSocket;
import org.springframework.web.socket.config.annotation.WebSocketConfigurer;
import org.springframework.web.socket.config.annotation.WebSocketHandlerRegistry;
import org.springframework.web.socket.server.standard.ServletServerContainerFactoryBean;

@Configuration(proxyBeanMethods = false)
@EnableWebSocket
class WebSocketConfig implements WebSocketConfigurer {

    private final GatewayHandler handler;
    private final Tokens tokens;

    WebSocketConfig(GatewayHandler handler, Tokens tokens) {
        this.handler = handler;
        this.tokens = tokens;
    }

    @Override
    public void registerWebSocketHandlers(WebSocketHandlerRegistry registry) {
        registry.addHandler(handler, "/ws")
                .addInterceptors(new TokenHandshake(tokens))
                .setAllowedOriginPatterns("*");
    }

    /**
     * Frames past max-frame-bytes are refused by the container itself, which closes with 1009.
     * Read from the environment rather than {@link GatewayProperties}: a factory bean's type is
     * checked before configuration properties are bound.
     */
    @Bean
    static ServletServerContainerFactoryBean webSocketContainer(
            @Value("${waterline.gateway.max-frame-bytes:64KB}") String maxFrameBytes) {
        ServletServerContainerFactoryBean container = new ServletServerContainerFactoryBean();
        int max = (int) DataSize.parse(maxFrameBytes).toBytes();
        container.setMaxTextMessageBufferSize(max);
        container.setMaxBinaryMessageBufferSize(max);
        return container;
    }
}
