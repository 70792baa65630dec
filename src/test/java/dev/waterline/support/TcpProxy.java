package dev.waterline.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A loopback TCP forwarder that a test can cut and restore, to make a real server unreachable
 * without stopping it. Cutting closes the listener and every forwarded connection; restoring
 * listens again on the same port.
 */
public final class TcpProxy implements AutoCloseable {

    private final int targetPort;
    private final int port;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile ServerSocket listener;

    public TcpProxy(int targetPort) {
        this.targetPort = targetPort;
        this.port = listen(0);
    }

    public int port() {
        return port;
    }

    public synchronized void cut() {
        closeQuietly(listener);
        listener = null;
        for (Socket s : sockets) {
            closeQuietly(s);
        }
        sockets.clear();
    }

    public synchronized void restore() {
        if (listener == null) {
            listen(port);
        }
    }

    @Override
    public void close() {
        cut();
    }

    private int listen(int onPort) {
        try {
            ServerSocket server = new ServerSocket();
            server.setReuseAddress(true);
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), onPort));
            listener = server;
            Thread.ofVirtual().name("tcp-proxy-accept").start(() -> accept(server));
            return server.getLocalPort();
        }
        catch (IOException e) {
            throw new IllegalStateException("proxy could not listen on " + onPort, e);
        }
    }

    private void accept(ServerSocket server) {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                sockets.add(client);
                sockets.add(upstream);
                Thread.ofVirtual().start(() -> pump(client, upstream));
                Thread.ofVirtual().start(() -> pump(upstream, client));
            }
            catch (IOException e) {
                // listener closed by cut(), or the target refused: the client sees a broken connection
            }
        }
    }

    private static void pump(Socket from, Socket to) {
        byte[] buf = new byte[16 * 1024];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            int n;
            while ((n = in.read(buf)) >= 0) {
                out.write(buf, 0, n);
                out.flush();
            }
        }
        catch (IOException e) {
            // either side closed
        }
        finally {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            }
            catch (Exception ignored) {
                // closing anyway
            }
        }
    }
}
