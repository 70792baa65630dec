import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Run by the build (pom.xml, load-tests/pom.xml) with the {@code java} of the JDK toolchain it
 * selected, as a single-file program (no compilation step of its own):
 * <pre>
 *   java .mvn/BuildJdk.java require 21                  one line saying what to install, and exit 1, if this JDK is older
 *   java .mvn/BuildJdk.java record target/java-home     this JDK's home, for the scripts and tests that start the jars
 * </pre>
 * The build runs {@code require} on the newest JDK the toolchains plugin discovers: if even that
 * one is too old, no JDK on the machine will do, and the toolchains plugin's own failure would
 * only say that no toolchain matched.
 */
class BuildJdk {

    // Plain if/else and nothing newer than Java 11: the require check runs on whatever JDK is newest,
    // which may be older than the one it asks for.
    public static void main(String[] args) throws Exception {
        String mode = args.length == 2 ? args[0] : "";
        if (mode.equals("require")) {
            int required = Integer.parseInt(args[1]);
            int found = Runtime.version().feature();
            if (found < required) {
                System.err.println("No JDK " + required + " or newer found (the newest here is JDK " + found + ", "
                        + System.getProperty("java.home") + "): install a JDK " + required + " or newer, such as"
                        + " Temurin " + required + ", in JAVA_HOME or the usual folders (/usr/lib/jvm, ~/.sdkman, ~/.jdks),"
                        + " and build again.");
                System.exit(1);
            }
        } else if (mode.equals("record")) {
            Path file = Path.of(args[1]).toAbsolutePath();
            Files.createDirectories(file.getParent());
            Files.writeString(file, System.getProperty("java.home") + System.lineSeparator());
        } else {
            System.err.println("usage: java BuildJdk.java require <feature version> | record <file>");
            System.exit(2);
        }
    }
}
