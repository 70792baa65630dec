package dev.waterline.load.run;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.waterline.load.chat.EntryReconciler;
import dev.waterline.load.chat.LoadRun;
import dev.waterline.load.chat.Reconciler;
import dev.waterline.load.clients.Behaviour;
import dev.waterline.load.clients.SimClient;
import org.HdrHistogram.Histogram;

/** What a run measured and what reconciliation found, as JSON and as a Markdown summary. */
public record Report(
        String label,
        Map<String, Object> configuration,
        String startedAt,
        double seconds,
        long offered,
        long skippedOffline,
        long heldByWindow,
        long accepted,
        Map<String, Long> rejectedByCode,
        Map<String, Long> errorsByCode,
        long expectedDeliveries,
        long liveDeliveries,
        double deliveriesPerExpected,
        double acceptedPerSecond,
        long acceptedSteadyPerSecond,
        long lost,
        List<Reconciler.Loss> lostSample,
        Map<String, Map<String, Object>> byBehaviour,
        long duplicatesSeen,
        long syncedMessages,
        long resentAfterReconnect,
        long reconnects,
        Map<Integer, Long> closesByCode,
        Map<String, Long> connectFailures,
        Map<String, Double> acceptLatencyMs,
        Map<String, Double> deliverLatencyMs,
        Map<String, Double> deliverLatencySteadyMs,
        Map<String, Double> generatorWriteLagMs,
        List<Timeline.Second> worstSeconds,
        double outboxDepthMax,
        double outboxDepthEnd,
        double outboxDrainSeconds,
        Map<String, Double> serverCounters,
        double serverHeapMaxMb,
        double serverRssMaxMb,
        long pgCeilingMsgsPerSecond,
        double steadyToPgCeiling,
        long stormClients,
        Map<String, Double> stormRecoveryMs,
        int nodes,
        long failovers,
        long killedClients,
        Map<String, Double> killRecoveryMs,
        Map<String, Long> entriesAccepted,
        long entriesWithoutTarget,
        long unchangedReacts,
        long entryMismatches,
        List<EntryReconciler.Mismatch> entryMismatchSample) {

    public static Report of(LoadRun run, Reconciler.Verdict verdict, ServerMetrics.Sample end, Instant started, Instant finished) {
        Stats s = run.stats;
        LoadConfig c = run.cfg;
        Map<String, Object> conf = new LinkedHashMap<>();
        conf.put("url", run.baseUrl);
        conf.put("nodes", run.bases);
        conf.put("killNodeAt", c.killNodeAt() == null ? null : c.killNodeAt().toString());
        conf.put("startServer", c.startServer());
        conf.put("serverArgs", c.serverArgs());
        conf.put("serverJvmOpts", c.serverJvmOpts());
        conf.put("clients", c.clients());
        conf.put("rate", c.rate());
        conf.put("duration", c.duration().toString());
        conf.put("rampUp", c.rampUp().toString());
        conf.put("pattern", c.pattern().name());
        conf.put("groupSize", c.groupSize());
        conf.put("payloadBytes", c.payloadBytes());
        conf.put("slowAckFraction", c.slowAckFraction());
        conf.put("neverAckFraction", c.neverAckFraction());
        conf.put("stopReadingFraction", c.stopReadingFraction());
        conf.put("reconnectFraction", c.reconnectFraction());
        conf.put("transport", c.transport().name());
        conf.put("window", c.window());
        conf.put("overloadBackoff", c.overloadBackoff().toString());
        // the outbox and heap maxima come from the reads of the server's metrics, this often
        conf.put("metricsEvery", c.metricsEvery().toString());
        conf.put("entryMix", c.entryMix());
        conf.put("deleteMix", c.deleteMix());
        double seconds = c.duration().toMillis() / 1000.0;
        long live = s.deliveries.sum();
        return new Report(c.label(), conf, started.toString(), Duration.between(started, finished).toMillis() / 1000.0,
                s.offered.sum(), s.skippedOffline.sum(), s.heldByWindow.sum(), verdict.accepted(), sums(s.rejectedByCode), sums(s.errorsByCode),
                verdict.expectedDeliveries(), live,
                verdict.expectedDeliveries() == 0 ? 0 : round((double) live / verdict.expectedDeliveries()),
                round(verdict.accepted() / seconds),
                s.steadyAcceptedPerSecond(),
                verdict.lost().size(), verdict.lost().subList(0, Math.min(20, verdict.lost().size())),
                byBehaviour(run),
                verdict.duplicatesSeen(), s.syncedMessages.sum(), s.resent.sum(), s.reconnects.sum(),
                new TreeMap<>(s.closesByCode.entrySet().stream().collect(
                        java.util.stream.Collectors.toMap(Map.Entry::getKey, e -> e.getValue().sum()))),
                sums(s.connectFailures),
                percentiles(s.acceptLatency), percentiles(s.deliverLatency), percentiles(s.deliverLatencySteady),
                percentiles(s.writeLag), s.timeline == null ? List.of() : s.timeline.worst(5),
                s.outboxDepthMax.get(), end.outboxDepth(), run.outboxDrainSeconds, run.serverCounters(),
                round(s.heapMax.get() / 1048576.0), round(s.rssMax.get() / 1048576.0),
                run.pgCeilingMsgsPerSecond,
                run.pgCeilingMsgsPerSecond == 0 ? 0 : round((double) s.steadyAcceptedPerSecond() / run.pgCeilingMsgsPerSecond),
                s.stormClients.get(), percentiles(s.stormRecovery),
                run.nodeCount(), s.failovers.sum(), s.killedClients.get(), percentiles(s.killRecovery),
                entriesByKind(run), s.entriesWithoutTarget.sum(), s.unchangedEntries.sum(),
                run.entryMismatches.size(), run.entryMismatches.subList(0, Math.min(20, run.entryMismatches.size())));
    }

    /** Accepted entries by kind: the messages (text) and the edits, deletes and reactions. */
    private static Map<String, Long> entriesByKind(LoadRun run) {
        Map<String, Long> out = new TreeMap<>();
        long entries = 0;
        for (EntryReconciler.Entry e : run.entries) {
            out.merge(e.kind(), 1L, Long::sum);
            entries++;
        }
        out.put("text", (long) run.accepted.size() - entries);
        return out;
    }

    /**
     * Per client behaviour: clients, live deliveries of accepted messages received, deliveries
     * expected, their ratio. Messages whose sender never saw {@code accepted} (it stopped reading
     * or lost its connection first) are left out of both sides.
     */
    private static Map<String, Map<String, Object>> byBehaviour(LoadRun run) {
        Map<String, Long> expected = new java.util.HashMap<>();
        java.util.Set<String> acceptedIds = new java.util.HashSet<>();
        for (Reconciler.Accepted a : run.accepted) {
            acceptedIds.add(a.messageId());
            for (String r : a.recipients()) {
                expected.merge(r, 1L, Long::sum);
            }
        }
        Map<String, Map<String, Object>> out = new TreeMap<>();
        for (Behaviour b : Behaviour.values()) {
            long clients = 0, live = 0, exp = 0;
            for (SimClient c : run.clients()) {
                if (c.behaviour == b) {
                    clients++;
                    for (var e : c.liveCounts.entrySet()) {
                        if (acceptedIds.contains(e.getKey())) {
                            live += e.getValue();
                        }
                    }
                    exp += expected.getOrDefault(c.userId, 0L);
                }
            }
            if (clients > 0) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("clients", clients);
                m.put("liveDeliveries", live);
                m.put("expected", exp);
                m.put("ratio", exp == 0 ? 0 : round((double) live / exp));
                out.put(b.name().toLowerCase(java.util.Locale.ROOT), m);
            }
        }
        return out;
    }

    public boolean clean() {
        return lost == 0 && entryMismatches == 0;
    }

    public void write(Path dir) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("report.json"), LoadRun.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(this));
        Files.writeString(dir.resolve("report.md"), markdown());
    }

    public String markdown() {
        StringBuilder b = new StringBuilder();
        b.append("# Load run").append(label == null ? "" : ": " + label).append("\n\n");
        b.append("Started ").append(startedAt).append(", ").append(seconds).append(" s in all. Configuration: `")
                .append(configuration).append("`\n\n");
        b.append("| measure | value |\n| --- | --- |\n");
        row(b, "verdict", (lost == 0 ? "**0 lost**" : "**" + lost + " LOST**")
                + (entryMismatches == 0 ? "" : ", **" + entryMismatches + " entries without their effect**"));
        row(b, "offered sends", offered + " (" + skippedOffline + " skipped: client offline"
                + (heldByWindow > 0 ? ", " + heldByWindow + " held back by the window or an overloaded back-off" : "") + ")");
        row(b, "accepted", accepted + " (" + acceptedPerSecond + " msg/s over the run)");
        row(b, "accepted msg/s, steady (median second of the load's second half)", Long.toString(acceptedSteadyPerSecond));
        if (!entriesAccepted.keySet().equals(java.util.Set.of("text"))) {
            row(b, "accepted by kind (edits, deletes, reactions: each an entry timed and reconciled as a message)", entriesAccepted
                    + (entriesWithoutTarget > 0 ? " (" + entriesWithoutTarget + " entries offered went as messages: nothing to change yet)" : "")
                    + (unchangedReacts > 0 ? ", " + unchangedReacts + " reacts accepted as unchanged" : ""));
            row(b, "entries' effects (deletes gone everywhere, last edit's body, reaction counts)",
                    entryMismatches == 0 ? "all as accepted" : entryMismatches + " mismatches");
        }
        row(b, "rejected by code", rejectedByCode.toString());
        row(b, "other errors by code", errorsByCode.toString());
        row(b, "live deliveries / expected (all message frames)", liveDeliveries + " / " + expectedDeliveries + " = " + deliveriesPerExpected);
        row(b, "live deliveries of accepted messages / expected, by client behaviour", byBehaviour.toString());
        row(b, "duplicates seen (live + sync)", Long.toString(duplicatesSeen));
        row(b, "messages read by resync", Long.toString(syncedMessages));
        row(b, "sends re-sent after reconnect", Long.toString(resentAfterReconnect));
        row(b, "reconnects", reconnects + ", closes by code " + closesByCode);
        row(b, "failed connect attempts by phase (each retried after 0.5 s)", connectFailures.toString());
        row(b, "send→accepted ms (p50/p90/p99/p99.9/max)", latency(acceptLatencyMs));
        row(b, "send→delivered ms (p50/p90/p99/p99.9/max)", latency(deliverLatencyMs));
        row(b, "send→delivered ms, sends of the load's second half (p50/p90/p99/p99.9/max)", latency(deliverLatencySteadyMs));
        row(b, "generator's own lag, send due→written (p50/p90/p99/p99.9/max; included in the latencies above)",
                latency(generatorWriteLagMs));
        row(b, "worst seconds by send→delivered p99 (second of the load: p99 / max ms, generator lag max ms; all in timeline.csv)",
                worstSeconds.stream().map(w -> w.second() + "s: " + w.p99Ms() + " / " + w.maxMs() + ", " + w.writeLagMaxMs())
                        .collect(java.util.stream.Collectors.joining("; ")));
        row(b, "outbox depth max / at end", (long) outboxDepthMax + " / " + (long) outboxDepthEnd
                + (outboxDrainSeconds >= 0 ? " (empty " + outboxDrainSeconds + " s after the load)" : " (not yet empty within the --outbox-drain budget)"));
        row(b, "server counters", serverCounters.toString());
        row(b, "server heap max / RSS max (MB)", serverHeapMaxMb + " / " + serverRssMaxMb);
        if (nodes > 1) {
            row(b, "nodes / connections made to a node other than the client's own (failovers)", nodes + " / " + failovers);
        }
        if (killedClients > 0) {
            row(b, "kill -9 of a node: its clients / reconnected elsewhere and resynced",
                    killedClients + " / " + killRecoveryMs.get("count").longValue());
            row(b, "kill -9 of a node: kill→reconnected elsewhere and resynced ms (p50/p90/p99/p99.9/max)", latency(killRecoveryMs));
        }
        if (stormClients > 0) {
            row(b, "reconnect storm: clients dropped at once / reconnected and resynced",
                    stormClients + " / " + stormRecoveryMs.get("count").longValue());
            row(b, "reconnect storm: drop→reconnected and resynced ms (p50/p90/p99/p99.9/max)", latency(stormRecoveryMs));
        }
        if (pgCeilingMsgsPerSecond > 0) {
            row(b, "PostgreSQL-only ceiling for the same rows (msg/s) / steady accepted as a share of it",
                    pgCeilingMsgsPerSecond + " / " + steadyToPgCeiling);
        }
        if (!lostSample.isEmpty()) {
            b.append("\nFirst losses:\n\n");
            for (Reconciler.Loss l : lostSample) {
                b.append("- ").append(l).append('\n');
            }
        }
        if (!entryMismatchSample.isEmpty()) {
            b.append("\nFirst entries without their effect:\n\n");
            for (EntryReconciler.Mismatch m : entryMismatchSample) {
                b.append("- ").append(m).append('\n');
            }
        }
        return b.toString();
    }

    private static void row(StringBuilder b, String k, String v) {
        b.append("| ").append(k).append(" | ").append(v).append(" |\n");
    }

    private static String latency(Map<String, Double> p) {
        return p.get("p50") + " / " + p.get("p90") + " / " + p.get("p99") + " / " + p.get("p99.9") + " / " + p.get("max");
    }

    private static Map<String, Long> sums(Map<String, java.util.concurrent.atomic.LongAdder> m) {
        Map<String, Long> out = new TreeMap<>();
        m.forEach((k, v) -> out.put(k, v.sum()));
        return out;
    }

    public static Map<String, Double> percentiles(Histogram h) {
        Map<String, Double> out = new LinkedHashMap<>();
        out.put("p50", ms(h.getValueAtPercentile(50)));
        out.put("p90", ms(h.getValueAtPercentile(90)));
        out.put("p99", ms(h.getValueAtPercentile(99)));
        out.put("p99.9", ms(h.getValueAtPercentile(99.9)));
        out.put("max", ms(h.getMaxValue()));
        out.put("count", (double) h.getTotalCount());
        return out;
    }

    private static double ms(long micros) {
        return round(micros / 1000.0);
    }

    private static double round(double v) {
        return Math.round(v * 1000) / 1000.0;
    }
}
