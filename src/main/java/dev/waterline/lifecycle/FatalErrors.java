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
 * {@code -XX:+ExitOnOutOfMemoryError}, which every launcher of the server passes.
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

    private final Terminator terminator;

    @Autowired
    FatalErrors(ObjectProvider<Terminator> terminator) {
        this(terminator.getIfAvailable(() -> EXIT));
    }

    public FatalErrors(Terminator terminator) {
        this.terminator = terminator;
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
