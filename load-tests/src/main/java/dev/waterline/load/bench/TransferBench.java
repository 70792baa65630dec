package dev.waterline.load.bench;

import java.io.InputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.waterline.load.deployment.ServerProcess;
import dev.waterline.load.run.ServerMetrics;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import tools.jackson.databind.JsonNode;

/**
 * {@code waterline-load transfer-bench}: {@code --files} attachments of {@code --size-mib} uploaded
 * at once ({@code POST /api/chats/{chatId}/attachments}), then downloaded at once
 * ({@code GET /api/attachments/{id}}), against a server started with a small heap
 * ({@code -Xmx256m} by default, and {@code -XX:+ExitOnOutOfMemoryError} as every start of the
 * harness: running out ends it, and the bench fails). Each transfer is by its own member of one
 * chat (twenty people attaching a file each, so no per-user cap on transfers is what is measured),
 * and each download by its uploader (an attachment not yet sent is its uploader's only). The
 * content is made from a seed as it is sent and digested as it is read: the harness holds none of
 * it, and each download must match its upload's SHA-256.
 * <p>
 * Reported: MiB/s of each transfer and of all together (total bytes over the phase's wall time),
 * each way, and the server's heap while they run: {@code jvm_memory_used_bytes{area="heap"}} from
 * {@code /actuator/prometheus} every {@code --sample-every}, its maximum per phase, with the
 * process's RSS (from /proc); the GC log ({@code -Xlog:gc}) is kept beside the server's log for
 * the heap after each collection.
 */
@Command(name = "transfer-bench", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Concurrent attachment uploads and downloads: MiB/s each way and the server's heap. The server it starts:"
                + " -Xmx256m -XX:+UseG1GC, with a GC log.")
public final class TransferBench implements Callable<Integer> {

    @Mixin
    BenchServer target;

    /** The started server's JVM options unless --server-jvm-opts says otherwise. */
    static final String JVM_OPTS = "-Xmx256m -XX:+UseG1GC";

    @Option(names = "--files", defaultValue = "20", description = "Transfers at once, each way. Default: ${DEFAULT-VALUE}")
    int files;

    @Option(names = "--size-mib", defaultValue = "25", description = "Size of each file in MiB (25: the default maximum). Default: ${DEFAULT-VALUE}")
    double sizeMib;

    @Option(names = "--sample-every", defaultValue = "PT0.25S", description = "How often the server's heap is read. Default: ${DEFAULT-VALUE}")
    Duration sampleEvery;

    @Option(names = "--out", description = "Folder for transfer-bench.md/.json (and the started server's log). Default: target/load-results/transfer-<time>")
    Path out;

    /** One file moved one way: which, how many bytes, how long, and its digest. */
    record Moved(int file, long bytes, double seconds, String sha256, String attachmentId) {
        double mibPerSecond() {
            return bytes / 1048576.0 / seconds;
        }
    }

    /** A phase: its transfers, its wall time, the server's heap and RSS maxima while it ran. */
    record Phase(String name, List<Moved> moved, double seconds, double heapMaxMb, double rssMaxMb, int samples) {
        double totalMibPerSecond() {
            return moved.stream().mapToLong(Moved::bytes).sum() / 1048576.0 / seconds;
        }
    }

    @Override
    public Integer call() throws Exception {
        Path dir = out != null ? out : Path.of("target", "load-results",
                "transfer-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        Files.createDirectories(dir);
        long size = Math.round(sizeMib * 1048576);
        ServerProcess server = null;
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            Path serverDir = dir.resolve("server").toAbsolutePath();
            Files.createDirectories(serverDir);
            // every transfer a turn at once: the file store's 16 turns would queue the last four, and
            // the bench measures twenty transfers, not the cap (--server-arg sets them otherwise)
            server = target.start(target.jvmOpts(JVM_OPTS) + " -Xlog:gc:file=" + serverDir.resolve("gc.log"),
                    List.of("--waterline.blobs.max-concurrent-transfers=" + files, "--waterline.blobs.max-transfers-per-user=" + files,
                            "--waterline.blobs.transfer-wait=5m"), serverDir);
            String base = server != null ? server.baseUrl() : target.url;
            BenchHttp http = new BenchHttp(base);
            String run = Long.toString(System.currentTimeMillis() % 100_000_000L, 36);
            List<String> users = new ArrayList<>();
            List<String> tokens = new ArrayList<>();
            for (int i = 0; i < files; i++) {
                users.add("tb" + run + "-" + i);
                tokens.add(http.token(users.get(i)));
            }
            String chat = http.chat(tokens.getFirst(), users.subList(1, users.size()));
            ServerMetrics metrics = new ServerMetrics(http.http, List.of(base));
            ServerProcess started = server;

            Phase up = phase("upload", metrics, started, pool, i -> upload(http, chat, tokens.get(i), i, size));
            List<String> failed = new ArrayList<>();
            for (Moved m : up.moved()) {
                if (m.bytes() != size) {
                    failed.add("upload " + m.file() + ": " + m.bytes() + " bytes stored of " + size);
                }
            }
            Phase down = phase("download", metrics, started, pool, i -> download(http, tokens.get(i), up.moved().get(i)));
            for (Moved m : down.moved()) {
                Moved u = up.moved().get(m.file());
                if (m.bytes() != size || !m.sha256().equals(u.sha256())) {
                    failed.add("download " + m.file() + ": " + m.bytes() + " bytes, sha256 " + (m.sha256().equals(u.sha256()) ? "matches" : "differs"));
                }
            }
            if (server != null && !server.alive()) {
                failed.add("the server is no longer running (an OutOfMemoryError ends it): " + server.dataDir().getParent().resolve("server.log"));
            }
            String md = markdown(base, size, up, down, failed);
            Files.writeString(dir.resolve("transfer-bench.md"), md);
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("server", base);
            json.put("serverJvmOpts", target.describe(JVM_OPTS));
            json.put("files", files);
            json.put("bytesEach", size);
            json.put("upload", up);
            json.put("download", down);
            json.put("failed", failed);
            BenchHttp.JSON.writerWithDefaultPrettyPrinter().writeValue(dir.resolve("transfer-bench.json").toFile(), json);
            System.out.println(md);
            System.out.println("Reports in " + dir.toAbsolutePath());
            return failed.isEmpty() ? 0 : 2;
        }
        finally {
            if (server != null) {
                server.close();
            }
        }
    }

    interface Transfer {
        Moved run(int file) throws Exception;
    }

    /** Every file's transfer at once, the server's heap sampled meanwhile. */
    private Phase phase(String name, ServerMetrics metrics, ServerProcess server, ExecutorService pool, Transfer transfer) throws Exception {
        AtomicLong heapMax = new AtomicLong(), rssMax = new AtomicLong(), samples = new AtomicLong();
        Thread sampler = Thread.ofPlatform().daemon().name("transfer-heap").start(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                ServerMetrics.Sample s = metrics.sample();
                samples.incrementAndGet();
                heapMax.accumulateAndGet((long) s.heapUsed(), Math::max);
                rssMax.accumulateAndGet(server != null ? server.rssBytes() : (long) s.rss(), Math::max);
                try {
                    TimeUnit.MILLISECONDS.sleep(sampleEvery.toMillis());
                }
                catch (InterruptedException e) {
                    return;
                }
            }
        });
        long start = System.nanoTime();
        List<CompletableFuture<Moved>> all = new ArrayList<>();
        for (int i = 0; i < files; i++) {
            int file = i;
            all.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return transfer.run(file);
                }
                catch (Exception e) {
                    throw new IllegalStateException(name + " " + file + " failed: " + e.getMessage(), e);
                }
            }, pool));
        }
        List<Moved> moved = all.stream().map(CompletableFuture::join).toList();
        double seconds = (System.nanoTime() - start) / 1e9;
        sampler.interrupt();
        sampler.join();
        Phase p = new Phase(name, moved, seconds, heapMax.get() / 1048576.0, rssMax.get() / 1048576.0, (int) samples.get());
        System.err.printf("transfer-bench: %d %ss of %d bytes in %.1f s, %.1f MiB/s together; heap max %.0f MB%n",
                files, name, moved.getFirst().bytes(), seconds, p.totalMibPerSecond(), p.heapMaxMb());
        return p;
    }

    private Moved upload(BenchHttp http, String chat, String token, int file, long size) throws Exception {
        MessageDigest digest = MessageDigest.getInstance("SHA-256");
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(http.base + "/api/chats/" + chat + "/attachments?name="
                        + URLEncoder.encode("file-" + file + ".bin", StandardCharsets.UTF_8)))
                .header("Content-Type", "application/octet-stream").timeout(Duration.ofMinutes(10))
                .POST(HttpRequest.BodyPublishers.fromPublisher(HttpRequest.BodyPublishers.ofInputStream(
                        () -> new DigestInputStream(generated(file, size), digest)), size));
        long start = System.nanoTime();
        HttpResponse<String> r = http.send(b, token);
        double seconds = (System.nanoTime() - start) / 1e9;
        if (r.statusCode() != 201) {
            throw new IllegalStateException("upload answered " + r.statusCode() + " " + r.body());
        }
        JsonNode a = BenchHttp.JSON.readTree(r.body());
        String sent = HexFormat.of().formatHex(digest.digest());
        if (!sent.equalsIgnoreCase(a.path("sha256").asString(""))) {
            throw new IllegalStateException("upload " + file + ": the server's sha256 " + a.path("sha256") + " is not the one sent, " + sent);
        }
        return new Moved(file, a.path("size").asLong(-1), seconds, sent, a.get("attachmentId").asString());
    }

    private Moved download(BenchHttp http, String token, Moved uploaded) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(http.base + "/api/attachments/" + uploaded.attachmentId()))
                .header("Authorization", "Bearer " + token).timeout(Duration.ofMinutes(10)).GET().build();
        long start = System.nanoTime();
        HttpResponse<InputStream> r = http.http.send(request, HttpResponse.BodyHandlers.ofInputStream());
        MessageDigest digest = MessageDigest.getInstance("SHA-256");
        long read = 0;
        try (InputStream in = r.body()) {
            if (r.statusCode() != 200) {
                throw new IllegalStateException("download answered " + r.statusCode() + " " + new String(in.readAllBytes(), StandardCharsets.UTF_8));
            }
            byte[] buffer = new byte[64 * 1024];
            for (int n; (n = in.read(buffer)) > 0; ) {
                digest.update(buffer, 0, n);
                read += n;
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        return new Moved(uploaded.file(), read, seconds, HexFormat.of().formatHex(digest.digest()), uploaded.attachmentId());
    }

    /**
     * {@code size} bytes from a seeded generator, made as they are read: nothing of the file is held.
     * What they are depends on the sizes they are read in; each side digests what it actually moved.
     * (The server's small-heap test of stream blobs sends these too.)
     */
    public static InputStream generated(long seed, long size) {
        SplittableRandom random = new SplittableRandom(seed);
        return new InputStream() {
            long left = size;

            @Override
            public int read() {
                byte[] one = new byte[1];
                return read(one, 0, 1) == 1 ? one[0] & 0xff : -1;
            }

            @Override
            public int read(byte[] b, int off, int len) {
                if (left <= 0) {
                    return -1;
                }
                int n = (int) Math.min(len, left);
                for (int i = 0; i < n; i += 8) {
                    long v = random.nextLong();
                    for (int k = 0; k < 8 && i + k < n; k++, v >>>= 8) {
                        b[off + i + k] = (byte) v;
                    }
                }
                left -= n;
                return n;
            }
        };
    }

    private String markdown(String base, long size, Phase up, Phase down, List<String> failed) {
        StringBuilder b = new StringBuilder("# Attachment transfer bench\n\n");
        b.append(files).append(" files of ").append(size / 1048576.0).append(" MiB, each way all at once, each by its own member of one chat; server ")
                .append(target.describe(JVM_OPTS)).append(target.url == null ? " (GC log: server/gc.log)" : "").append(".\n\n");
        b.append("| phase | wall s | MiB/s together | MiB/s per transfer (min / median / max) | server heap max MB | server RSS max MB | heap samples |\n")
                .append("| --- | --- | --- | --- | --- | --- | --- |\n");
        for (Phase p : List.of(up, down)) {
            List<Double> each = p.moved().stream().map(Moved::mibPerSecond).sorted().toList();
            b.append("| ").append(p.name()).append(" | ").append(r1(p.seconds())).append(" | ").append(r1(p.totalMibPerSecond())).append(" | ")
                    .append(r1(each.getFirst())).append(" / ").append(r1(each.get(each.size() / 2))).append(" / ").append(r1(each.getLast()))
                    .append(" | ").append(r1(p.heapMaxMb())).append(" | ").append(r1(p.rssMaxMb())).append(" | ").append(p.samples()).append(" |\n");
        }
        b.append("\n").append(failed.isEmpty() ? "Every upload stored whole with its SHA-256, every download byte for byte the same."
                : "FAILED: " + failed).append('\n');
        return b.toString();
    }

    private static String r1(double v) {
        return String.format(java.util.Locale.ROOT, "%.1f", v);
    }
}
