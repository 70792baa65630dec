package dev.waterline.config;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;

/**
 * What a killed server leaves of its embedded PostgreSQL and Redis. Both run as processes of
 * their own; a JVM killed with SIGKILL (or by the OOM killer) stops neither, and the PostgreSQL
 * left behind holds the data folder, so the next start failed after a minute's wait.
 * <p>
 * A server claims each embedded data folder with an exclusive lock on a file beside it, held
 * for the JVM's life and released by the operating system however the JVM ends. A folder whose
 * lock is taken is in use by a live server: the start is refused, and nothing of it is touched.
 * A folder whose lock is free but whose pid file names a live process of the expected program
 * on that folder holds an orphan: it is stopped (SIGTERM, then SIGKILL after a grace), and the
 * start goes on on the same data.
 */
final class EmbeddedOrphans {

    private static final Map<Path, FileChannel> CLAIMS = new ConcurrentHashMap<>();

    private EmbeddedOrphans() {
    }

    /** Locks {@code dir} for this JVM (once per JVM), or refuses if a live process holds it. */
    static void claim(Path dir) {
        CLAIMS.computeIfAbsent(dir, d -> {
            Path lockFile = d.resolveSibling(d.getFileName() + ".lock");
            try {
                Files.createDirectories(d.getParent());
                FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
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
                return channel;
            }
            catch (IOException e) {
                throw new UncheckedIOException("Could not lock " + lockFile, e);
            }
        });
    }

    /**
     * Stops the process that {@code pidFile} names if it is alive, runs {@code program}, and its
     * command line names {@code dir}: one left by a server that died (the caller holds the claim).
     */
    static void stopOrphan(Path pidFile, String program, Path dir, Log log) {
        Optional<ProcessHandle> orphan = orphan(pidFile, program, dir);
        if (orphan.isEmpty()) {
            return;
        }
        ProcessHandle p = orphan.get();
        if (log != null) {
            log.warn("A " + program + " (pid " + p.pid() + ") left by a server that died still runs on " + dir + ": stopping it");
        }
        p.destroy();
        try {
            if (!p.onExit().completeOnTimeout(null, 30, TimeUnit.SECONDS).thenApply(h -> h != null).join()) {
                p.destroyForcibly();
                p.onExit().completeOnTimeout(null, 10, TimeUnit.SECONDS).join();
            }
        }
        finally {
            if (p.isAlive()) {
                throw new IllegalStateException("Could not stop the " + program + " (pid " + p.pid() + ") left on " + dir);
            }
        }
    }

    static Optional<ProcessHandle> orphan(Path pidFile, String program, Path dir) {
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
        return ProcessHandle.of(pid).filter(ProcessHandle::isAlive).filter(p -> {
            String command = p.info().commandLine().orElse("");
            return command.contains(program) && (command.contains(dir.toString()) || dir.equals(workingDirectory(p)));
        });
    }

    /** Where the process works (Redis moves into its data folder and retitles its command line), on Linux; null elsewhere. */
    private static Path workingDirectory(ProcessHandle p) {
        try {
            return Files.readSymbolicLink(Path.of("/proc", Long.toString(p.pid()), "cwd"));
        }
        catch (IOException | UnsupportedOperationException | SecurityException e) {
            return null;   // no /proc, or not ours to read: not recognised, so not stopped
        }
    }
}
