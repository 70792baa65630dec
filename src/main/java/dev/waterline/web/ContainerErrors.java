package dev.waterline.web;

import java.io.IOException;
import java.io.Writer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.waterline.input.InputGate;
import org.apache.catalina.Host;
import org.apache.catalina.Valve;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.core.StandardHost;
import org.apache.catalina.valves.ErrorReportValve;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.coyote.ActionCode;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.http.HttpStatus;
import tools.jackson.databind.json.JsonMapper;

/**
 * What Tomcat answers itself, before any filter or servlet (a request path it cannot decode:
 * {@code /api/chats/%FF}, {@code /x/%zz}), carries the error body of every other answer,
 * {@code {"error":"<code>","message":"…"}}, never Tomcat's HTML page. Such a request maps to no
 * context, so neither {@link ErrorBodies} nor a filter sees it: only the host's error report valve
 * does, and this configuration replaces that valve (Spring Boot's, which hides the server's
 * version and the stack trace) with {@link JsonReport}.
 */
@Configuration(proxyBeanMethods = false)
class ContainerErrors {

    @Bean
    static WebServerFactoryCustomizer<TomcatServletWebServerFactory> jsonContainerErrors() {
        return new Customizer();
    }

    /** Runs after Spring Boot's own customizer, whose context customizer adds the valve replaced here. */
    private record Customizer() implements WebServerFactoryCustomizer<TomcatServletWebServerFactory>, Ordered {

        @Override
        public void customize(TomcatServletWebServerFactory factory) {
            factory.addContextCustomizers(context -> {
                Host host = (Host) context.getParent();
                for (Valve v : host.getPipeline().getValves()) {
                    if (v instanceof ErrorReportValve) {
                        host.getPipeline().removeValve(v);
                    }
                }
                host.getPipeline().addValve(new JsonReport());
                if (host instanceof StandardHost standard) {
                    // so that the host, when it starts, does not add a default valve of its own
                    standard.setErrorReportValveClass(JsonReport.class.getName());
                }
            });
        }

        @Override
        public int getOrder() {
            return Ordered.LOWEST_PRECEDENCE;
        }
    }

    /** The host's error report as PROTOCOL.md's error body: the status's code and Tomcat's message, no stack trace. */
    static final class JsonReport extends ErrorReportValve {

        private static final Log log = LogFactory.getLog(JsonReport.class);
        private static final JsonMapper JSON = JsonMapper.builder().build();
        static final int MAX_MESSAGE = 200;

        JsonReport() {
            setShowReport(false);
            setShowServerInfo(false);
        }

        @Override
        protected void report(Request request, Response response, Throwable throwable) {
            int status = response.getStatus();
            // as the valve it replaces: nothing for a success, a body already written, or a report already made
            if (status < 400 || response.getContentWritten() > 0 || !response.setErrorReported()) {
                return;
            }
            AtomicBoolean ioAllowed = new AtomicBoolean(false);
            response.getCoyoteResponse().action(ActionCode.IS_IO_ALLOWED, ioAllowed);
            if (!ioAllowed.get()) {
                return;
            }
            HttpStatus known = HttpStatus.resolve(status);
            String message = response.getMessage();
            if (message == null || message.isBlank()) {
                message = known == null ? "HTTP " + status : known.getReasonPhrase();
            }
            message = InputGate.printable(message.length() > MAX_MESSAGE ? message.substring(0, MAX_MESSAGE) : message);
            try {
                response.setContentType("application/json");
                response.setCharacterEncoding("utf-8");
                Writer writer = response.getReporter();
                if (writer != null) {
                    Map<String, String> body = new LinkedHashMap<>();
                    body.put("error", ApiErrors.code(status));
                    body.put("message", message);
                    writer.write(JSON.writeValueAsString(body));
                    response.finishResponse();
                }
            }
            catch (IOException | IllegalStateException e) {
                // the client is gone or the response was committed meanwhile: nothing more to send it
                log.debug("could not write the container's error report: " + e);
            }
        }
    }
}
