package dev.waterline.load.run;

/**
 * The load generator jar's entry point: {@code java -jar waterline-load.jar [walkthrough] …}. It
 * lives apart from {@link LoadCli} because the server's test suite compiles the generator's
 * sources (all but this file): there the one main class must be {@code TestWaterlineApplication}'s,
 * which {@code ./mvnw spring-boot:test-run} finds by looking.
 */
public final class Main {

    private Main() {
    }

    public static void main(String[] args) {
        System.exit(LoadCli.commandLine().execute(args));
    }
}
