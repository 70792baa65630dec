package dev.waterline.lifecycle;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A process for {@link FatalErrorsUnitTests}: installs the out-of-memory guard, as the server's
 * main does, then lets a platform thread of its own (as Tomcat's acceptor and poller are) run out
 * of memory while the main thread waits for a minute. It should not live that long.
 */
final class OutOfMemoryProbe {

    private OutOfMemoryProbe() {
    }

    public static void main(String[] args) throws InterruptedException {
        if (args.length == 0 || !args[0].equals("unguarded")) {
            FatalErrors.haltOnOutOfMemory();
        }
        Thread hog = new Thread(() -> {
            List<long[]> held = new ArrayList<>();
            while (true) {
                held.add(new long[1 << 16]);
            }
        }, "acceptor-like");
        hog.start();
        new CountDownLatch(1).await(60, TimeUnit.SECONDS);
        System.out.println("still alive after a minute");
    }
}
