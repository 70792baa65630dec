package dev.waterline.load.deployment;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import dev.waterline.load.run.Stats;

/**
 * A TCP proxy on loopback that makes the faults a network or a slow database makes, in user space
 * (this kernel has no {@code netem}): latency and jitter added to every chunk in each direction,
 * a fraction of connections reset part-way through (mid-frame), and on demand every connection
 * cut, new ones refused, and let through again. The faults can be changed, and the target moved
 * (a replica promoted behind a fixed address), while connections are open.
 * <p>
 * Design note, one connection: each direction has a reader and a writer on virtual threads. The
 * reader stamps every chunk it reads with a due time, {@code max(previous due, now + latency +
 * U[0, jitter))}, and queues it; the writer sends each chunk when it is due. Due times never go
 * down, so the bytes keep their order whatever the jitter, as TCP's would. Resets: a connection's
 * traffic (both directions counted together) is cut into windows of {@code resetWithinBytes}
 * bytes, and in each window it is reset with probability {@code resetRate}, at a uniform point
 * within it: a short connection is reset with that probability once, and a long-lived one (a
 * pooled database connection, a WebSocket) keeps meeting the fault as its traffic flows, as on a
 * lossy network. A reset closes both sockets with SO_LINGER 0, so both ends see a reset, usually
 * in the middle of a frame. New faults apply to open connections from their next window drawn
 * at once. A failed read or write ends the connection (both sockets closed); nothing is retried,
 * since a proxy that hid failures would test nothing.
 *
 * @see ProxyCli for the command line
 */
public final class FaultProxy implements AutoCloseable {

    /**
     * What the proxy does to the traffic.
     *
     * @param latency          added to every chunk, each way
     * @param jitter           a further uniform [0, jitter) per chunk, each way (order kept)
     * @param resetRate        fraction of connections reset part-way, 0-1
     * @param resetWithinBytes a reset connection is reset after a uniform 1..this many bytes
     * @param seed             of the random draws, so a scenario can be repeated
     */
    public record Faults(Duration latency, Duration jitter, double resetRate, long resetWithinBytes, long seed) {
        public Faults {
            if (latency.isNegative() || jitter.isNegative()) {
                throw new IllegalArgumentException("latency and jitter must not be negative");
            }
            if (resetRate < 0 || resetRate > 1) {
                throw new IllegalArgumentException("resetRate must be within 0-1: " + resetRate);
            }
            if (resetWithinBytes < 1) {
                throw new IllegalArgumentException("resetWithinBytes must be at least 1");
            }
        }

        public static Faults none() {
            return new Faults(Duration.ZERO, Duration.ZERO, 0, 1, 1);
        }
    }

    /** Counts since the start: connections accepted, connections reset by the proxy, bytes forwarded each way. */
    public record Stats(long connections, long resets, long bytesUp, long bytesDown) {
    }

    private static final int CHUNK = 16 * 1024;
    /** At most this many chunks (of up to {@link #CHUNK} bytes) wait in one direction. */
    private static final int QUEUED_CHUNKS = 64;
    private static final byte[] EOF = new byte[0];

    private volatile InetSocketAddress target;
    private volatile Faults faults;
    private final Random random;
    private final Set<Pipe> pipes = ConcurrentHashMap.newKeySet();
    private final AtomicLong connections = new AtomicLong();
    private final AtomicLong resets = new AtomicLong();
    private final AtomicLong bytesUp = new AtomicLong();
    private final AtomicLong bytesDown = new AtomicLong();
    /** Raised by every cut: a connection accepted before it and opened after it is closed, not forwarded. */
    private final AtomicLong cuts = new AtomicLong();
    private final int port;
    private volatile ServerSocket listener;
    private volatile Thread acceptor;

    public FaultProxy(int listenPort, String targetHost, int targetPort, Faults faults) {
        this.target = InetSocketAddress.createUnresolved(targetHost, targetPort);
        this.faults = faults;
        this.random = new Random(faults.seed());
        this.port = listen(listenPort);
    }

    public int port() {
        return port;
    }

    public Stats stats() {
        return new Stats(connections.get(), resets.get(), bytesUp.get(), bytesDown.get());
    }

    /** From now on, these faults: on new connections, and on open ones from a window drawn at once. */
    public void faults(Faults next) {
        synchronized (random) {
            random.setSeed(next.seed());   // a scenario's own seed decides its connections' draws from here on
        }
        faults = next;
        for (Pipe p : pipes) {
            p.draw(p.forwarded.get());
        }
    }

    public Faults faults() {
        return faults;
    }

    /** New connections go to this target from now on; open ones stay where they are (cut them to move them). */
    public void retarget(String host, int port) {
        target = InetSocketAddress.createUnresolved(host, port);
    }

    /** Ends every connection through the proxy (a plain close, not a reset); new ones still come through. */
    public void cut() {
        cuts.incrementAndGet();
        for (Pipe p : pipes) {
            p.close(false);
        }
    }

    /** Cuts every connection and refuses new ones, as a host that went away. */
    public synchronized void refuse() {
        ServerSocket l = listener;
        listener = null;
        if (l != null) {
            try {
                l.close();
                // The JDK closes a socket that a thread is blocked accepting on only once that thread
                // has left accept: until then the port still completes handshakes into its backlog.
                acceptor.join();
            }
            catch (IOException e) {
                // closing a listener that failed is still closed for us
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        cut();
    }

    /** Listens again on the same port after {@link #refuse()}. */
    public synchronized void restore() {
        if (listener == null) {
            listen(port);
        }
    }

    @Override
    public void close() {
        refuse();
    }

    private int listen(int onPort) {
        try {
            ServerSocket server = new ServerSocket();
            server.setReuseAddress(true);
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), onPort));
            listener = server;
            acceptor = Thread.ofVirtual().name("fault-proxy-accept-" + server.getLocalPort()).start(() -> accept(server));
            return server.getLocalPort();
        }
        catch (IOException e) {
            throw new IllegalStateException("the proxy could not listen on port " + onPort, e);
        }
    }

    private void accept(ServerSocket server) {
        while (!server.isClosed()) {
            Socket client;
            try {
                client = server.accept();
            }
            catch (IOException e) {
                if (server.isClosed()) {
                    return;   // refused or closed: the loop ends with its listener
                }
                // out of descriptors, say: the port stays open, so the loop must go on
                LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
                continue;
            }
            connections.incrementAndGet();
            // each connection draws from a generator of its own, seeded in accept order: a run with the same
            // seed makes the same first decision for each connection whatever the threads' timing
            Random own;
            synchronized (random) {
                own = new Random(random.nextLong());
            }
            long cutsAtAccept = cuts.get();
            // connected on a thread of its own: a slow target does not hold up the next accept
            Thread.ofVirtual().start(() -> open(client, own, cutsAtAccept));
        }
    }

    private void open(Socket client, Random own, long cutsAtAccept) {
        Socket upstream;
        try {
            InetSocketAddress to = target;
            upstream = new Socket(to.getHostString(), to.getPort());
            client.setTcpNoDelay(true);
            upstream.setTcpNoDelay(true);
        }
        catch (IOException e) {
            // the target refused: the client sees its connection end, as it would without the proxy
            closeQuietly(client);
            return;
        }
        Pipe pipe = new Pipe(client, upstream, own);
        pipes.add(pipe);
        if (cuts.get() != cutsAtAccept) {
            pipe.close(false);   // a cut came while it was being opened: it is cut as well
            return;
        }
        pipe.start();
    }

    private long dueNanos(long previous, Random own) {
        long jitter = faults.jitter().toNanos();
        long draw;
        synchronized (own) {
            draw = jitter == 0 ? 0 : (long) (own.nextDouble() * jitter);
        }
        return Math.max(previous, System.nanoTime() + faults.latency().toNanos() + draw);
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        }
        catch (IOException e) {
            // already closed: nothing more to end
        }
    }

    private record Chunk(byte[] bytes, long due) {
    }

    /** One proxied connection: two directions, each a reader and a writer. */
    private final class Pipe {
        private final Socket client;
        private final Socket upstream;
        private final AtomicLong forwarded = new AtomicLong();
        private final List<LinkedBlockingQueue<Chunk>> queues = new CopyOnWriteArrayList<>();
        private final AtomicInteger ended = new AtomicInteger();
        private volatile boolean closed;

        private final Random own;
        /** The current reset window ends before this byte count; guarded by this. */
        private long windowEnd;
        /** The byte count at which the connection is reset, or -1 for none in this window; guarded by this. */
        private long resetAt = -1;

        Pipe(Socket client, Socket upstream, Random own) {
            this.client = client;
            this.upstream = upstream;
            this.own = own;
            draw(0);
        }

        /** A new reset window from byte count {@code from}: reset within it with the current probability. */
        synchronized void draw(long from) {
            Faults f = faults;
            if (f.resetRate() == 0) {
                // no resets: one window for good, so that a fault-free proxy does no work per byte
                windowEnd = Long.MAX_VALUE;
                resetAt = -1;
                return;
            }
            synchronized (own) {
                windowEnd = from + f.resetWithinBytes();
                resetAt = own.nextDouble() < f.resetRate() ? from + 1 + (long) (own.nextDouble() * f.resetWithinBytes()) : -1;
            }
        }

        /** Of a chunk of {@code length} bytes after {@code before} forwarded, how many to write before the reset; -1: no reset. */
        synchronized int resetPoint(long before, int length) {
            long after = before + length;
            while (true) {
                if (resetAt > 0 && resetAt <= after) {
                    return (int) Math.max(0, resetAt - before);
                }
                if (after < windowEnd) {
                    return -1;
                }
                draw(windowEnd);
            }
        }

        void start() {
            direction(client, upstream, bytesUp);
            direction(upstream, client, bytesDown);
        }

        private void direction(Socket from, Socket to, AtomicLong counted) {
            // bounded: a side that stops reading fills its sender's buffers, as it would without the proxy
            LinkedBlockingQueue<Chunk> queue = new LinkedBlockingQueue<>(QUEUED_CHUNKS);
            queues.add(queue);
            Thread.ofVirtual().start(() -> read(from, queue));
            Thread.ofVirtual().start(() -> write(to, queue, counted));
        }

        private void read(Socket from, LinkedBlockingQueue<Chunk> queue) {
            long due = 0;
            byte[] buf = new byte[CHUNK];
            try {
                InputStream in = from.getInputStream();
                for (int n = in.read(buf); n >= 0 && !closed; n = in.read(buf)) {
                    due = dueNanos(due, own);
                    queue.put(new Chunk(Arrays.copyOf(buf, n), due));
                }
                queue.put(new Chunk(EOF, dueNanos(due, own)));
            }
            catch (IOException e) {
                close(false);   // a broken side ends the connection: both ends see it
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                close(false);
            }
        }

        private void write(Socket to, LinkedBlockingQueue<Chunk> queue, AtomicLong counted) {
            try {
                OutputStream out = to.getOutputStream();
                while (!closed) {
                    Chunk c = queue.take();
                    for (long wait = c.due() - System.nanoTime(); wait > 0; wait = c.due() - System.nanoTime()) {
                        LockSupport.parkNanos(wait);
                    }
                    if (c.bytes() == EOF) {
                        if (!closed) {
                            to.shutdownOutput();
                        }
                        // both ways ended: the sockets are closed, not left half-closed for good
                        if (ended.incrementAndGet() == 2) {
                            close(false);
                        }
                        return;
                    }
                    byte[] bytes = c.bytes();
                    int part = resetPoint(forwarded.getAndAdd(bytes.length), bytes.length);
                    if (part >= 0) {
                        out.write(bytes, 0, Math.min(part, bytes.length));
                        out.flush();
                        close(true);
                        return;
                    }
                    out.write(bytes);
                    out.flush();
                    counted.addAndGet(bytes.length);
                }
            }
            catch (IOException e) {
                close(false);
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                close(false);
            }
        }

        synchronized void close(boolean reset) {
            if (closed) {
                return;
            }
            closed = true;
            pipes.remove(this);
            if (reset) {
                // counted here, once: both directions share the byte count and may cross it together
                resets.incrementAndGet();
                for (Socket s : new Socket[] {client, upstream}) {
                    try {
                        s.setSoLinger(true, 0);
                    }
                    catch (IOException e) {
                        // a socket already broken resets itself
                    }
                }
            }
            closeQuietly(client);
            closeQuietly(upstream);
            // wakes a writer waiting for a chunk that will not come, so its thread ends (and a reader
            // waiting for room: what is queued is dropped with the connection)
            for (LinkedBlockingQueue<Chunk> q : queues) {
                q.clear();
                q.offer(new Chunk(EOF, 0));
            }
        }
    }
}
