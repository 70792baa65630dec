package dev.waterline.load.run;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * CPU time of the parts of a run, from {@code /proc} (Linux only; elsewhere every figure is 0): a
 * part is a set of root processes and every process below them (but those that are another part's
 * roots), so a PostgreSQL's backends count with their postmaster and a server's child Redis
 * apart. Read {@link #sample} at the start and the end of a window; {@link Sample#secondsSince}
 * gives each part's CPU seconds (user + system, its reaped children's included) in between.
 */
public final class CpuMeter {

    /** One part: its name and how its root processes are told (by pid and command line). */
    public record Part(String name, Predicate<Proc> root) {
    }

    /** A process as {@code /proc} shows it. */
    public record Proc(long pid, long ppid, String cmdline, long ticks) {
    }

    private static final long HZ = 100;   // USER_HZ, 100 on every Linux this runs on

    private final List<Part> parts;

    public CpuMeter(List<Part> parts) {
        this.parts = List.copyOf(parts);
    }

    /** A part whose only root is {@code pid}. */
    public static Part pid(String name, long pid) {
        return new Part(name, p -> p.pid() == pid);
    }

    /** A part whose roots are {@code pids}. */
    public static Part pids(String name, List<Long> pids) {
        Set<Long> set = new HashSet<>(pids);
        return new Part(name, p -> set.contains(p.pid()));
    }

    /** A part whose roots are the processes whose command line contains {@code text} (a data folder). */
    public static Part mentioning(String name, String text) {
        return new Part(name, p -> p.cmdline().contains(text));
    }

    /** Each part's CPU ticks now. */
    public Sample sample() {
        Map<Long, Proc> procs = readProcs();
        Map<Long, List<Long>> children = new HashMap<>();
        for (Proc p : procs.values()) {
            children.computeIfAbsent(p.ppid(), k -> new ArrayList<>()).add(p.pid());
        }
        Map<String, List<Long>> roots = new LinkedHashMap<>();
        Set<Long> anyRoot = new HashSet<>();
        for (Part part : parts) {
            List<Long> r = new ArrayList<>();
            for (Proc p : procs.values()) {
                if (part.root().test(p)) {
                    r.add(p.pid());
                }
            }
            roots.put(part.name(), r);
            anyRoot.addAll(r);
        }
        Map<String, Map<Long, Long>> byPart = new LinkedHashMap<>();
        for (Part part : parts) {
            Map<Long, Long> ticks = new HashMap<>();
            List<Long> todo = new ArrayList<>(roots.get(part.name()));
            while (!todo.isEmpty()) {
                long pid = todo.removeLast();
                Proc p = procs.get(pid);
                if (p != null && ticks.putIfAbsent(pid, p.ticks()) == null) {
                    for (long child : children.getOrDefault(pid, List.of())) {
                        // a child that is a part of its own (the server's Redis) is not its parent's
                        if (!anyRoot.contains(child)) {
                            todo.add(child);
                        }
                    }
                }
            }
            byPart.put(part.name(), ticks);
        }
        return new Sample(System.nanoTime(), byPart, Set.copyOf(anyRoot));
    }

    /** Each part's ticks by process at one moment (a process's own and its reaped children's). */
    public record Sample(long atNanos, Map<String, Map<Long, Long>> ticks, Set<Long> roots) {

        /**
         * CPU seconds each part used from {@code earlier} to this sample: the difference of the
         * part's totals. A process that ended inside the window and was reaped by a process of its
         * part (a PostgreSQL backend, an autovacuum worker) moved its time into its parent's
         * children's time, which both totals include, so it is neither lost nor counted twice; a
         * process that began inside the window counts whole.
         */
        public Map<String, Double> secondsSince(Sample earlier) {
            Map<String, Double> out = new LinkedHashMap<>();
            if (!roots.equals(earlier.roots())) {
                // a part's process ended (or one began) inside the window: reaped by a process of
                // another part, its whole life's CPU would land there. No figure rather than a wrong one.
                for (String part : ticks.keySet()) {
                    out.put(part, Double.NaN);
                }
                return out;
            }
            for (Map.Entry<String, Map<Long, Long>> e : ticks.entrySet()) {
                long now = e.getValue().values().stream().mapToLong(Long::longValue).sum();
                long before = earlier.ticks().getOrDefault(e.getKey(), Map.of()).values().stream().mapToLong(Long::longValue).sum();
                out.put(e.getKey(), Math.max(0, now - before) / (double) HZ);
            }
            return out;
        }
    }

    private static Map<Long, Proc> readProcs() {
        Map<Long, Proc> out = new HashMap<>();
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(Path.of("/proc"), p -> p.getFileName().toString().matches("\\d+"))) {
            for (Path dir : dirs) {
                Proc p = read(dir);
                if (p != null) {
                    out.put(p.pid(), p);
                }
            }
        }
        catch (IOException e) {
            // no /proc (not Linux): every part reads 0
        }
        return out;
    }

    /**
     * {@code /proc/<pid>/stat}: fields after the command name's closing parenthesis; ppid is the
     * 2nd, utime the 12th, stime the 13th, and the reaped children's cutime and cstime the 14th and
     * 15th.
     */
    static Proc read(Path dir) {
        try {
            String stat = Files.readString(dir.resolve("stat"), StandardCharsets.US_ASCII);
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            String cmdline = new String(Files.readAllBytes(dir.resolve("cmdline")), StandardCharsets.UTF_8).replace('\0', ' ');
            return new Proc(Long.parseLong(dir.getFileName().toString()), Long.parseLong(f[1]), cmdline,
                    Long.parseLong(f[11]) + Long.parseLong(f[12]) + Long.parseLong(f[13]) + Long.parseLong(f[14]));
        }
        catch (IOException | RuntimeException e) {
            return null;   // the process ended while being read
        }
    }
}
