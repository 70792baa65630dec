package dev.waterline.load.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import dev.waterline.load.deployment.ServerProcess;
import picocli.CommandLine.Option;

/** The server a benchmark measures: one it starts on a folder of its own (the default), or a running one ({@code --url}). */
final class BenchServer {

    @Option(names = "--url", description = "A running server (zero-configuration mode: dev tokens). Default: start one (--server-jar).")
    String url;

    @Option(names = "--server-jar", defaultValue = ServerProcess.DEFAULT_JAR, converter = ServerProcess.JarConverter.class,
            description = "Default: ${DEFAULT-VALUE}")
    Path serverJar;

    @Option(names = "--server-jvm-opts", description = "JVM options of the started server. Default: the benchmark's own (see its description).")
    String serverJvmOpts;

    @Option(names = "--server-arg", description = "Extra argument for the started server (repeatable; it wins over the benchmark's own).")
    List<String> serverArgs = new ArrayList<>();

    /** The started server's JVM options: {@code --server-jvm-opts}, or the benchmark's. */
    String jvmOpts(String benchmarks) {
        return serverJvmOpts != null ? serverJvmOpts : benchmarks;
    }

    /** What the report says of the server: its JVM options, or that it was a running one. */
    String describe(String benchmarksJvmOpts) {
        return url == null ? jvmOpts(benchmarksJvmOpts) : "(a running server, " + url + ")";
    }

    /**
     * Starts the server in {@code dir} with the benchmark's arguments, each unless {@code --server-arg}
     * sets the same property, then those of {@code --server-arg}; null with {@code --url}.
     */
    ServerProcess start(String jvmOpts, List<String> benchmarksArgs, Path dir) throws IOException, InterruptedException {
        if (url != null) {
            return null;
        }
        List<String> args = new ArrayList<>();
        for (String a : benchmarksArgs) {
            String name = a.substring(0, a.indexOf('=') + 1);
            if (serverArgs.stream().noneMatch(s -> s.startsWith(name))) {
                args.add(a);
            }
        }
        args.addAll(serverArgs);
        return ServerProcess.start(new ServerProcess.Launch(serverJar, jvmOpts, args, 1), dir);
    }
}
