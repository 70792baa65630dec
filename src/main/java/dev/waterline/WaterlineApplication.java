package dev.waterline;

import java.time.Clock;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;

@SpringBootApplication
@ConfigurationPropertiesScan
@EnableScheduling
public class WaterlineApplication {

    public static void main(String[] args) {
        // before anything else runs: an OutOfMemoryError that ends any thread ends the process, even
        // where the JVM was started without -XX:+ExitOnOutOfMemoryError
        dev.waterline.lifecycle.FatalErrors.haltOnOutOfMemory();
        // Tomcat gives every WebSocket connection an 8 KiB frame read buffer, an 8 KiB write buffer
        // and an 8 Ki-char encoder buffer, allocated when it opens. At 1 KiB, an idle connection
        // costs an eighth of that (frames here are a few hundred bytes; larger ones take more
        // rounds, and go out as fragmented messages).
        // A system property, read once when Tomcat's WebSocket classes load: it must be set first.
        if (System.getProperty(TOMCAT_WS_BUFFER) == null) {
            System.setProperty(TOMCAT_WS_BUFFER, "1024");
        }
        // http hooks connect to the address the SSRF guard checked and name the host in a Host
        // header, which the JDK's HTTP client allows only when this is set before its first use
        String restricted = System.getProperty(JDK_RESTRICTED_HEADERS, "");
        if (!restricted.toLowerCase(java.util.Locale.ROOT).contains("host")) {
            System.setProperty(JDK_RESTRICTED_HEADERS, restricted.isBlank() ? "host" : restricted + ",host");
        }
        SpringApplication.run(WaterlineApplication.class, args);
    }

    private static final String TOMCAT_WS_BUFFER = "org.apache.tomcat.websocket.DEFAULT_BUFFER_SIZE";
    private static final String JDK_RESTRICTED_HEADERS = "jdk.httpclient.allowRestrictedHeaders";

    @Bean
    Clock clock() {
        return Clock.systemUTC();
    }
}
