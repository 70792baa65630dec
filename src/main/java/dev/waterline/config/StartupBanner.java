package dev.waterline.config;

import dev.waterline.auth.AuthProperties;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.event.EventListener;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/** Tells, once the server listens, how to get a token and connect. */
@Component
class StartupBanner {

    private static final Log log = LogFactory.getLog(StartupBanner.class);

    private final Environment env;

    StartupBanner(Environment env) {
        this.env = env;
    }

    @EventListener
    void ready(WebServerInitializedEvent event) {
        int port = event.getWebServer().getPort();
        boolean devTokens = env.getProperty("waterline.auth.dev-tokens", Boolean.class, false);
        String base = "http://localhost:" + port;
        if (devTokens) {
            log.info("Waterline is up on " + base + ". Get a dev token: curl -s -X POST " + base
                    + "/api/dev/tokens -H 'Content-Type: application/json' -d '{\"userId\":\"alice\"}'"
                    + " ; then connect: ws://localhost:" + port + "/ws?access_token=<token>");
            boolean zeroConfig = env.getProperty("waterline.embedded.zero-config", Boolean.class, false);
            if (zeroConfig) {
                log.warn("DEV TOKENS ARE ON (zero-configuration mode): anyone who reaches this server gets a token for"
                        + " any user. It listens on " + env.getProperty("server.address", "all interfaces")
                        + " only; configure a database, Redis and WATERLINE_AUTH_JWT_SECRET for anything else.");
            }
            else {
                log.warn("DEV TOKENS ARE ON (waterline.auth.dev-tokens=true) with an external database: anyone who"
                        + " reaches this server gets a token for any user. For local development only.");
            }
        }
        if (AuthProperties.PUBLISHED_DEVELOPMENT_SECRET.equals(env.getProperty("waterline.auth.jwt-secret"))) {
            log.warn("THE JWT SECRET IS THE DEVELOPMENT SECRET PUBLISHED IN WATERLINE'S REPOSITORY (docker-compose.yml):"
                    + " anyone can sign a token for any user. For local development only; set WATERLINE_AUTH_JWT_SECRET"
                    + " (32 or more random bytes) for anything else.");
        }
        if (!devTokens) {
            log.info("Waterline is up on " + base + ". Connect to ws://localhost:" + port
                    + "/ws with 'Authorization: Bearer <HS256 JWT signed with waterline.auth.jwt-secret>' (dev tokens are off)");
        }
    }
}
