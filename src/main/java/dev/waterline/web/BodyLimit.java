package dev.waterline.web;

import java.io.IOException;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * No request body larger than {@code waterline.api.max-body-bytes} (or what a {@link BodyAllowance}
 * gives its own endpoint) is read, nor one slower than {@code body-min-rate} (bodies without an
 * allowance: a file upload's endpoint paces its own), on any path: a
 * declared {@code Content-Length} over it is answered {@code 413 too_large} unread, and a body
 * that grows past it while being read (chunked), through the stream or the reader, fails the
 * read ({@link BodyTooLarge}, answered 413 too). A body is parsed before the handler can check its
 * fields, so without this bound one request could make the parser hold any amount of text. The
 * filter runs first (before any other filter could read a body; {@link RequestTargets}, of the same
 * order, reads none), and on every path
 * whatever its spelling ({@code /%61pi/...} reaches the same controllers as {@code /api/...}).
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE)
class BodyLimit extends OncePerRequestFilter {

    private final long defaultMax;
    private final long paceWindowNanos;
    private final long paceBytesPerSecond;
    private final java.util.List<BodyAllowance> allowances;

    BodyLimit(ApiProperties properties, java.util.List<BodyAllowance> allowances) {
        this.defaultMax = properties.maxBodyBytes().toBytes();
        this.paceWindowNanos = properties.bodyRateWindow().toNanos();
        this.paceBytesPerSecond = properties.bodyMinRate().toBytes();
        this.allowances = java.util.List.copyOf(allowances);
    }

    /** The bound for this request: an allowance's, or the default (negative: none of them). */
    private long allowance(HttpServletRequest request) {
        for (BodyAllowance a : allowances) {
            long m = a.maxBodyBytes(request);
            if (m >= 0) {
                return m;
            }
        }
        return -1;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        long allowed = allowance(request);
        long max = allowed >= 0 ? allowed : defaultMax;
        // a body with an allowance of its own (a file upload) is paced by its endpoint, over its longer windows
        Pace pace = allowed >= 0 ? null : new Pace(paceWindowNanos, paceBytesPerSecond);
        if (request.getContentLengthLong() > max) {
            response.setStatus(413);
            response.setContentType(MediaType.APPLICATION_JSON_VALUE);
            response.getWriter().write("{\"error\":\"too_large\",\"message\":\"request body larger than " + max + " bytes\"}");
            return;
        }
        chain.doFilter(new HttpServletRequestWrapper(request) {
            private ServletInputStream limited;
            private java.io.BufferedReader reader;

            @Override
            public ServletInputStream getInputStream() throws IOException {
                if (limited == null) {
                    limited = new Limited(super.getInputStream(), max, pace);
                }
                return limited;
            }

            @Override
            public java.io.BufferedReader getReader() throws IOException {
                if (reader == null) {
                    String encoding = getCharacterEncoding();
                    java.nio.charset.Charset charset = java.nio.charset.StandardCharsets.UTF_8;
                    try {
                        if (encoding != null) {
                            charset = java.nio.charset.Charset.forName(encoding);
                        }
                    }
                    catch (IllegalArgumentException unknown) {
                        throw new java.io.UnsupportedEncodingException(encoding);
                    }
                    reader = new java.io.BufferedReader(new java.io.InputStreamReader(getInputStream(), charset));
                }
                return reader;
            }
        }, response);
    }

    private static final class Limited extends ServletInputStream {
        private final ServletInputStream in;
        private final long max;
        private final Pace pace;
        private long read;

        Limited(ServletInputStream in, long max, Pace pace) {
            this.in = in;
            this.max = max;
            this.pace = pace;
        }

        @Override
        public int read() throws IOException {
            int b = in.read();
            if (b >= 0) {
                count(1);
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = in.read(b, off, len);
            if (n > 0) {
                count(n);
            }
            return n;
        }

        private void count(int n) throws IOException {
            read += n;
            if (read > max) {
                throw new BodyTooLarge(max);
            }
            if (pace != null) {
                pace.moved(n);
            }
        }

        @Override
        public boolean isFinished() {
            return in.isFinished();
        }

        @Override
        public boolean isReady() {
            return in.isReady();
        }

        @Override
        public void setReadListener(ReadListener listener) {
            in.setReadListener(listener);
        }
    }
}
