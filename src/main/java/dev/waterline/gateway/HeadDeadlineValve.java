package dev.waterline.gateway;

import java.io.IOException;

import jakarta.servlet.ServletException;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ValveBase;

/**
 * The first thing every request meets in Tomcat's engine: it tells the connection
 * ({@link GuardedProtocol.HeadTimedWrapper}) that its request head arrived whole, so the head
 * deadline no longer applies to its body or its response; and, once a plain response has ended,
 * that the next head is awaited. An upgraded connection (101: the WebSocket) and an asynchronous
 * response are left without a deadline: they are no longer waiting for a request head.
 */
final class HeadDeadlineValve extends ValveBase {

    HeadDeadlineValve() {
        super(true);
    }

    @Override
    public void invoke(Request request, Response response) throws IOException, ServletException {
        GuardedProtocol.HeadTimedWrapper connection = request.getServletConnection() instanceof GuardedProtocol.HeadTimedConnection c
                ? c.wrapper() : null;
        if (connection != null) {
            connection.headComplete();
        }
        try {
            getNext().invoke(request, response);
        }
        finally {
            if (connection != null && !request.isAsync() && response.getStatus() != 101) {
                connection.nextHeadAwaited();
            }
        }
    }
}
