package dev.waterline.gateway;

import dev.waterline.auth.Tokens;
import dev.waterline.ingest.SendLimits;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
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
     * The container allocates its receive buffers (text and binary) for every connection when it
     * opens. Sized to the largest frame allowed (64 KiB, i.e. ~200 KB a connection with the
     * text buffer counted in chars) they made 20,000 mostly idle connections cost ~4 GB of heap,
     * so they are 1 KiB at most: larger frames arrive in parts, which the gateway puts together
     * and refuses (1009) past max-frame-bytes. The socket's own buffers are cut to 2 KiB (not
     * further: HTTP responses, history pages among them, are written a socket buffer at a
     * time). Measured by heap dump at 5,000 connections: 10 KB of buffers a connection (16 KB
     * with 2 KiB WebSocket buffers) of ~45 KB in all; the rest is Tomcat's and Spring's session
     * objects. {@link GatewayProperties} is bound here from the environment rather than injected:
     * a factory bean's type is checked before configuration properties are bound.
     */
    @Bean
    static ServletServerContainerFactoryBean webSocketContainer(Environment environment) {
        GatewayProperties gateway = Binder.get(environment).bindOrCreate("waterline.gateway", GatewayProperties.class);
        ServletServerContainerFactoryBean container = new ServletServerContainerFactoryBean();
        int buffer = (int) Math.min(MESSAGE_BUFFER, gateway.maxFrameBytes().toBytes());
        container.setMaxTextMessageBufferSize(buffer);
        container.setMaxBinaryMessageBufferSize(buffer);
        return container;
    }

    /** Ingest's limits on a {@code send} frame, which the gateway's operators set. */
    @Bean
    static SendLimits sendLimits(GatewayProperties gateway) {
        return new SendLimits(gateway.maxBodyChars());
    }

    private static final int MESSAGE_BUFFER = 1024;
    private static final int SOCKET_BUFFER = 2 * 1024;

    /** Tomcat's per-connection socket buffers (8 KiB each by default), for the same reason. */
    @Bean
    static WebServerFactoryCustomizer<TomcatServletWebServerFactory> smallSocketBuffers() {
        return factory -> factory.addConnectorCustomizers(connector -> {
            connector.setProperty("socket.appReadBufSize", Integer.toString(SOCKET_BUFFER));
            connector.setProperty("socket.appWriteBufSize", Integer.toString(SOCKET_BUFFER));
        });
    }
}
