package dev.waterline.lifecycle;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;

/**
 * What happens when a loop thread meets an {@link Error} (out of memory, a stack overflow, a
 * class that failed to load): the process goes down, loudly. A loop that stopped silently would
 * leave the server up and answering health checks while sends queue unanswered or deliveries
 * stop; a dead process is restarted by whatever runs it, and its clients reconnect and resync.
 *
 * <p>The default {@link Terminator} asks the JVM to exit (status 70) from a thread of its own, so
 * shutdown hooks run (the context answers what it can, sockets get 1001), and halts it if that
 * has not finished within 30 s. Out-of-memory errors are normally handled even earlier by
 * {@code -XX:+ExitOnOutOfMemoryError}, which every launcher of the server passes; for a JVM started
 * without it (a plain {@code java -jar}), {@link #haltOnOutOfMemory} makes an
 * {@link OutOfMemoryError} that ends any thread (Tomcat's acceptor or poller among them) end the
 * process too: without it, a server whose acceptor died stayed up, answering nothing, holding its
 * sockets and deaf to SIGTERM (its shutdown hooks could not run in the full heap).
 */
@Component
public class FatalErrors {

    private static final Log log = LogFactory.getLog(FatalErrors.class);

    /** Ends the process. Replaceable (a bean of this type) so that a test can watch it instead. */
    @FunctionalInterface
    public interface Terminator {
        void terminate(String where, Error error);
    }

    static final int EXIT_STATUS = 70;

    static final Terminator EXIT = (where, error) -> {
        Thread exit = new Thread(() -> System.exit(EXIT_STATUS), "fatal-exit");
        exit.setDaemon(false);
        exit.start();
        Thread halt = new Thread(() -> {
            try {
                Thread.sleep(30_000);
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            Runtime.getRuntime().halt(EXIT_STATUS);
        }, "fatal-halt");
        halt.setDaemon(true);
        halt.start();
    };

    /** The JVM's own status for {@code -XX:+ExitOnOutOfMemoryError}, so that both ways of dying look alike. */
    static final int OUT_OF_MEMORY_STATUS = 3;

    private static volatile boolean installed;

    /**
     * Installs (once per JVM) a default uncaught-exception handler that halts the process at once,
     * status 3, when an {@link OutOfMemoryError} ends a thread; every other uncaught throwable goes
     * on to the handler that was there before (or the thread group's, which prints it). A halt, not
     * an exit: with the heap full, shutdown hooks may never finish, and a half-stopped server is
     * what this is here to prevent. It allocates nothing on the way but a short line to stderr.
     */
    public static synchronized void haltOnOutOfMemory() {
        if (installed) {
            return;
        }
        installed = true;
        Thread.UncaughtExceptionHandler before = Thread.getDefaultUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler((thread, error) -> {
            if (outOfMemory(error)) {
                try {
                    System.err.println("FATAL: OutOfMemoryError ended a thread; the process halts (status 3) so that it can be restarted");
                }
                finally {
                    Runtime.getRuntime().halt(OUT_OF_MEMORY_STATUS);
                }
            }
            if (before != null) {
                before.uncaughtException(thread, error);
            }
            else {
                thread.getThreadGroup().uncaughtException(thread, error);
            }
        });
    }

    static boolean outOfMemory(Throwable error) {
        Throwable t = error;
        for (int depth = 0; t != null && depth < 32; depth++, t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof OutOfMemoryError) {
                return true;
            }
        }
        return false;
    }

    private final Terminator terminator;

    @Autowired
    FatalErrors(ObjectProvider<Terminator> terminator) {
        this(terminator.getIfAvailable(() -> EXIT));
    }

    public FatalErrors(Terminator terminator) {
        this.terminator = terminator;
        haltOnOutOfMemory();
    }

    /** {@code where} met {@code error}: logs it and ends the process. */
    public void died(String where, Error error) {
        try {
            log.fatal(where + " died of " + error + "; the process exits so that it can be restarted", error);
        }
        finally {
            terminator.terminate(where, error);
        }
    }
}
