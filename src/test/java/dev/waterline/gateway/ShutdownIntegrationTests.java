package dev.waterline.gateway;

import java.time.Duration;

import dev.waterline.WaterlineApplication;
import dev.waterline.support.Api;
import dev.waterline.support.WsClient;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/** A server of its own, so that the test can stop it. */
class ShutdownIntegrationTests {

    @Test
    void stoppingTheServerClosesEveryConnectionWith1001AfterAnsweringWhatItAccepted() {
        ConfigurableApplicationContext ctx = new SpringApplicationBuilder(WaterlineApplication.class)
                .profiles("test")
                .run("--server.port=0", "--waterline.embedded.database=shutdown", "--spring.data.redis.database=6");
        int port = ((WebServerApplicationContext) ctx).getWebServer().getPort();
        Api api = new Api(port);
        String alice = api.token("shutdown-alice");
        String chat = api.createChat(alice, "shutdown-bob");
        try (WsClient a = WsClient.connect(port, alice)) {
            a.next("welcome");
            a.sendMessage("last-words", chat, "goodbye");
            assertThat(a.answer("last-words").get("type").asString()).isEqualTo("accepted");
            ctx.close();
            assertThat(a.awaitClose(Duration.ofSeconds(15))).isEqualTo(1001);
        }
        finally {
            ctx.close();
        }
    }
}
