package dev.waterline.config;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.commons.logging.Log;

/**
 * What a killed server leaves of its embedded PostgreSQL and Redis. Both run as processes of
 * their own; a JVM killed with SIGKILL (or by the OOM killer) stops neither, and the PostgreSQL
 * left behind holds the data folder, so the next start failed after a minute's wait.
 * <p>
 * A server claims each embedded data folder with an exclusive lock on a file beside it, held
 * for the JVM's life and released by the operating system however the JVM ends, and writes into
 * it when it took the claim. A folder whose lock is taken is in use by a live server: the start
 * is refused, and nothing of it is touched. A folder whose lock is free, and whose lock file says
 * an earlier server claimed it, may hold that server's orphan: the process its pid file names is
 * stopped only if it is alive, is the expected program on exactly that folder, and started after
 * that claim (so neither a process that reused the pid nor a PostgreSQL someone started by hand
 * before is touched). PostgreSQL is asked for a fast shutdown (SIGINT: its sessions are ended,
 * where SIGTERM would wait for them), Redis with SIGTERM; SIGKILL after a grace.
 */
final class EmbeddedOrphans {

    /** Which program an orphan must be: its executable's file name, and how it names its folder. */
    enum Program {
        POSTGRES("postgres"), REDIS("redis-server");

        final String executable;

        Program(String executable) {
            this.executable = executable;
        }
    }

    private static final Map<Path, FileChannel> CLAIMS = new ConcurrentHashMap<>();
    /** Claims whose time could not be read, this JVM ({@link EmbeddedMetrics} reports them). */
    static final AtomicLong UNREADABLE_CLAIMS = new AtomicLong();

    private EmbeddedOrphans() {
    }

    /**
     * Locks {@code dir} for this JVM (once per JVM), or refuses if a live process holds it.
     *
     * @param log where a claim whose time cannot be read is told (null: nowhere)
     * @return when the previous claim (of a server now gone) was taken; empty if there was none
     */
    static Optional<Instant> claim(Path dir, Log log) {
        Path lockFile = dir.resolveSibling(dir.getFileName() + ".lock");
        AtomicReference<Optional<Instant>> previous = new AtomicReference<>(Optional.empty());
        CLAIMS.computeIfAbsent(dir, d -> {
            try {
                Files.createDirectories(d.getParent());
                FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
                FileLock lock;
                try {
                    lock = channel.tryLock();
                }
                catch (OverlappingFileLockException e) {
                    lock = null;
                }
                if (lock == null) {
                    channel.close();
                    throw new IllegalStateException(d + " is in use by another running Waterline (" + lockFile
                            + " is locked): stop it, or give this one another waterline.embedded.data-dir");
                }
                // read through the locked channel: opening and closing the file again would release the
                // lock (POSIX locks belong to the process and end with any of its descriptors on the file)
                ByteBuffer was = ByteBuffer.allocate(512);
                int n = Math.max(0, channel.read(was, 0));
                previous.set(claimedAt(new String(was.array(), 0, n, StandardCharsets.UTF_8), lockFile, log));
                channel.truncate(0);
                channel.write(ByteBuffer.wrap(("claimed " + Instant.now() + " by pid " + ProcessHandle.current().pid() + "\n")
                        .getBytes(StandardCharsets.UTF_8)), 0);
                channel.force(true);
                return channel;
            }
            catch (IOException e) {
                throw new UncheckedIOException("Could not lock " + lockFile, e);
            }
        });
        return previous.get();
    }

    /**
     * When the claim {@code content} records was taken; empty for no claim. A claim whose time
     * cannot be read (not one this class wrote, or a torn write) is taken for none, so nothing is
     * taken for an orphan: counted ({@link #UNREADABLE_CLAIMS}, {@code waterline.embedded.claims.unreadable})
     * and logged at warn (at most once per data folder and JVM: a folder is claimed once).
     */
    static Optional<Instant> claimedAt(String content, Path lockFile, Log log) {
        String[] words = content.strip().split("\\s+");
        if (words.length < 2 || !words[0].equals("claimed")) {
            return Optional.empty();
        }
        try {
            return Optional.of(Instant.parse(words[1]));
        }
        catch (DateTimeParseException e) {
            UNREADABLE_CLAIMS.incrementAndGet();
            if (log != null) {
                log.warn(lockFile + " records a claim whose time cannot be read (" + e.getMessage()
                        + "): taken for no claim, so no orphan of an earlier server is looked for");
            }
            return Optional.empty();
        }
    }

    /**
     * Stops the orphan that {@code pidFile} names, if there is one (see the class comment).
     *
     * @param previousClaim what {@link #claim} returned for {@code dir}
     */
    static void stopOrphan(Path pidFile, Program program, Path dir, Optional<Instant> previousClaim, Log log) {
        if (previousClaim.isEmpty()) {
            return;
        }
        Optional<ProcessHandle> orphan = orphan(pidFile, program, dir, previousClaim.get());
        if (orphan.isEmpty()) {
            return;
        }
        ProcessHandle p = orphan.get();
        if (log != null) {
            log.warn("A " + program.executable + " (pid " + p.pid() + ") left by a server that died still runs on " + dir + ": stopping it");
        }
        signal(p, program == Program.POSTGRES ? "INT" : "TERM");
        if (!gone(p, 30)) {
            p.destroyForcibly();
            if (!gone(p, 10)) {
                throw new IllegalStateException("Could not stop the " + program.executable + " (pid " + p.pid() + ") left on " + dir);
            }
        }
    }

    static Optional<ProcessHandle> orphan(Path pidFile, Program program, Path dir, Instant claimedAfter) {
        if (!Files.exists(pidFile)) {
            return Optional.empty();
        }
        long pid;
        try {
            pid = Long.parseLong(Files.readAllLines(pidFile).stream().findFirst().orElse("").strip());
        }
        catch (IOException | NumberFormatException e) {
            return Optional.empty();   // unreadable: the program's own start decides what it means
        }
        Path real = realPath(dir);
        return ProcessHandle.of(pid).filter(p -> !gone(p)).filter(p -> {
            ProcessHandle.Info info = p.info();
            String executable = info.command().map(c -> Path.of(c).getFileName().toString()).orElse("");
            // the JDK dates a process from the boot time, which Linux gives in whole seconds: a slack of two
            boolean started = info.startInstant().map(s -> !s.isBefore(claimedAfter.minusSeconds(2))).orElse(false);
            boolean onDir = switch (program) {
                case POSTGRES -> executable.equals("postgres") && follows(info.arguments().map(List::of).orElse(List.of()), "-D", dir, real);
                // Redis retitles its command line, but it works in its data folder
                case REDIS -> executable.startsWith("redis-server") && real.equals(workingDirectory(p));
            };
            return started && onDir;
        });
    }

    private static boolean follows(List<String> args, String flag, Path dir, Path real) {
        int i = args.indexOf(flag);
        if (i < 0 || i + 1 >= args.size()) {
            return false;
        }
        Path named = Path.of(args.get(i + 1)).toAbsolutePath().normalize();
        return named.equals(dir) || realPath(named).equals(real);
    }

    private static Path realPath(Path p) {
        try {
            return p.toRealPath();
        }
        catch (IOException e) {
            return p;
        }
    }

    private static void signal(ProcessHandle p, String signal) {
        try {
            new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).inheritIO().start().waitFor(10, TimeUnit.SECONDS);
        }
        catch (IOException e) {
            p.destroy();   // no kill(1) here: SIGTERM through the JDK
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static boolean gone(ProcessHandle p, int seconds) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < deadline) {
            if (gone(p)) {
                return true;
            }
            p.onExit().completeOnTimeout(p, 100, TimeUnit.MILLISECONDS).join();
        }
        return gone(p);
    }

    /** Gone, or a zombie its parent has not reaped yet (the JDK counts those as alive). */
    private static boolean gone(ProcessHandle p) {
        if (!p.isAlive()) {
            return true;
        }
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(p.pid()), "stat"));
            int end = stat.lastIndexOf(')');
            return end > 0 && end + 2 < stat.length() && stat.charAt(end + 2) == 'Z';
        }
        catch (IOException | UnsupportedOperationException | SecurityException e) {
            return false;   // no /proc: the JDK's word stands
        }
    }

    /** Where the process works, on Linux; null elsewhere. */
    private static Path workingDirectory(ProcessHandle p) {
        try {
            return Files.readSymbolicLink(Path.of("/proc", Long.toString(p.pid()), "cwd"));
        }
        catch (IOException | UnsupportedOperationException | SecurityException e) {
            return null;   // no /proc, or not ours to read: not recognised, so not stopped
        }
    }
}
