package dev.waterline.load.deployment;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code waterline-load proxy}: a {@link FaultProxy} from the command line, for a chaos run to put
 * between the clients and the server or between the server and its database. It prints the port
 * it listens on, then a line of counts every interval, until it is stopped (SIGTERM or Ctrl-C).
 */
@Command(name = "proxy", mixinStandardHelpOptions = true, sortOptions = false,
        description = "A loopback TCP proxy that adds latency and jitter and resets a fraction of connections mid-stream.")
public final class ProxyCli implements Callable<Integer> {

    @Option(names = "--listen", defaultValue = "0", description = "Port to listen on (loopback). 0: a free one. Default: ${DEFAULT-VALUE}")
    int listen;

    @Option(names = "--target", required = true, description = "host:port to forward to, e.g. 127.0.0.1:5432.")
    String target;

    @Option(names = "--latency", defaultValue = "PT0S", description = "Added to every chunk, each way (ISO-8601). Default: ${DEFAULT-VALUE}")
    Duration latency;

    @Option(names = "--jitter", defaultValue = "PT0S", description = "A further uniform [0, jitter) per chunk, each way; order kept. Default: ${DEFAULT-VALUE}")
    Duration jitter;

    @Option(names = "--reset-rate", defaultValue = "0", description = "Fraction of connections reset part-way (0-1). Default: ${DEFAULT-VALUE}")
    double resetRate;

    @Option(names = "--reset-within", defaultValue = "65536", description = "A reset connection is reset after 1..this many bytes. Default: ${DEFAULT-VALUE}")
    long resetWithin;

    @Option(names = "--seed", defaultValue = "1", description = "Seed of the random draws. Default: ${DEFAULT-VALUE}")
    long seed;

    @Option(names = "--report-every", defaultValue = "PT10S", description = "How often to print the counts. Default: ${DEFAULT-VALUE}")
    Duration reportEvery;

    @Override
    public Integer call() throws Exception {
        int colon = target.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("--target must be host:port: " + target);
        }
        FaultProxy.Faults faults = new FaultProxy.Faults(latency, jitter, resetRate, resetWithin, seed);
        try (FaultProxy proxy = new FaultProxy(listen, target.substring(0, colon), Integer.parseInt(target.substring(colon + 1)), faults)) {
            System.out.println("listening on 127.0.0.1:" + proxy.port() + " -> " + target + " " + faults);
            CountDownLatch stopped = new CountDownLatch(1);
            Runtime.getRuntime().addShutdownHook(new Thread(stopped::countDown));
            while (!stopped.await(reportEvery.toMillis(), TimeUnit.MILLISECONDS)) {
                System.out.println(proxy.stats());
            }
            return 0;
        }
    }
}
