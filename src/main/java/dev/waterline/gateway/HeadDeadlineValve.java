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
 * that the next head is awaited (for an asynchronous response, once it completes). An upgraded
 * connection (101: the WebSocket) is left without a deadline: it no longer waits for request heads.
 */
final class HeadDeadlineValve extends ValveBase {

    /** Arms the next head's deadline when an asynchronous response ends, however it ends. */
    private record NextHead(GuardedProtocol.HeadTimedWrapper connection) implements jakarta.servlet.AsyncListener {

        @Override
        public void onComplete(jakarta.servlet.AsyncEvent event) {
            connection.nextHeadAwaited();
        }

        @Override
        public void onTimeout(jakarta.servlet.AsyncEvent event) {
            // the container completes it next (onComplete follows)
        }

        @Override
        public void onError(jakarta.servlet.AsyncEvent event) {
            // likewise: an error ends in onComplete
        }

        @Override
        public void onStartAsync(jakarta.servlet.AsyncEvent event) {
            event.getAsyncContext().addListener(this);
        }
    }

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
            if (connection != null && response.getStatus() != 101) {
                if (request.isAsync()) {
                    // the response goes on after this returns: the next head is awaited once it completes
                    request.getAsyncContext().addListener(new NextHead(connection));
                }
                else {
                    connection.nextHeadAwaited();
                }
            }
        }
    }
}
