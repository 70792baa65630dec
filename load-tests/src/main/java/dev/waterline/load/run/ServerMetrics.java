package dev.waterline.load.run;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * Scrapes the few server series the progress line and the report need from
 * {@code /actuator/prometheus}, of every node: counters, heap and RSS are summed over the nodes
 * that answer; the outbox's depth, oldest age and the reclaim line, one for the whole cluster
 * (one database), are the largest any node reports.
 */
public final class ServerMetrics {

    public record Sample(double outboxDepth, double outboxOldestAge, double heapUsed, double rss,
                  double deliveries, double accepted, double safeDeleteId, Map<String, Double> counters) {
        public static final Sample NONE = new Sample(-1, -1, -1, -1, -1, -1, -1, Map.of());
    }

    /** Series (label sets summed) a report shows as they stand at the end of a run. */
    static final java.util.List<String> REPORTED = java.util.List.of(
            "waterline_deliveries_total", "waterline_acks_total", "waterline_reaper_withdrawals_total",
            "waterline_outbox_reclaimed_total", "waterline_outbox_reclaimed_backstop_total",
            "waterline_watermark_rebuilds_total", "waterline_fast_shed_total");

    private final HttpClient http;
    private final java.util.List<URI> uris;

    public ServerMetrics(HttpClient http, java.util.List<String> baseUrls) {
        this.http = http;
        this.uris = baseUrls.stream().map(b -> URI.create(b + "/actuator/prometheus")).toList();
    }

    public Sample sample() {
        Sample all = null;
        for (URI uri : uris) {
            Sample one = sample(uri);
            if (one == Sample.NONE) {
                continue;   // a node that is down (a kill) reports nothing
            }
            all = all == null ? one : combine(all, one);
        }
        return all == null ? Sample.NONE : all;
    }

    private static double unknownIfNaN(double v) {
        return Double.isNaN(v) ? -1 : v;
    }

    private static Sample combine(Sample a, Sample b) {
        Map<String, Double> counters = new java.util.TreeMap<>(a.counters());
        b.counters().forEach((k, v) -> counters.merge(k, v, Double::sum));
        return new Sample(Math.max(a.outboxDepth(), b.outboxDepth()), Math.max(a.outboxOldestAge(), b.outboxOldestAge()),
                a.heapUsed() + b.heapUsed(), a.rss() + b.rss(), a.deliveries() + b.deliveries(), a.accepted() + b.accepted(),
                Math.max(a.safeDeleteId(), b.safeDeleteId()), counters);
    }

    private Sample sample(URI uri) {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                return Sample.NONE;
            }
            Map<String, Double> sums = parse(r.body());
            return new Sample(sums.getOrDefault("waterline_outbox_depth", -1.0),
                    sums.getOrDefault("waterline_outbox_oldest_age_seconds", -1.0),
                    sums.getOrDefault("heap", -1.0),
                    // the server reads NaN where /proc cannot be read; -1 is this report's "unknown"
                    unknownIfNaN(sums.getOrDefault("waterline_process_resident_memory_bytes", -1.0)),
                    sums.getOrDefault("waterline_deliveries_total", -1.0),
                    sums.getOrDefault("waterline_messages_accepted_total", -1.0),
                    sums.getOrDefault("waterline_safe_delete_id", -1.0), counters(sums));
        }
        catch (Exception e) {
            return Sample.NONE;
        }
    }

    /**
     * Prometheus text into sums by series name over their label sets; the heap's
     * {@code jvm_memory_used_bytes} as {@code heap}, and the withdrawals and deliveries also by
     * their full label set.
     */
    public static Map<String, Double> parse(String body) {
        Map<String, Double> sums = new HashMap<>();
        for (String line : body.split("\n")) {
            if (line.isEmpty() || line.charAt(0) == '#') {
                continue;
            }
            int sp = line.lastIndexOf(' ');
            String key = line.substring(0, sp);
            double v = Double.parseDouble(line.substring(sp + 1));
            String name = key.contains("{") ? key.substring(0, key.indexOf('{')) : key;
            if (name.equals("jvm_memory_used_bytes") && key.contains("area=\"heap\"")) {
                sums.merge("heap", v, Double::sum);
            }
            else {
                sums.merge(name, v, Double::sum);
            }
            if (name.equals("waterline_reaper_withdrawals_total") || name.equals("waterline_deliveries_total")) {
                sums.merge(key.replace("\"", "'"), v, Double::sum);
            }
        }
        return sums;
    }

    private static Map<String, Double> counters(Map<String, Double> sums) {
        Map<String, Double> out = new java.util.TreeMap<>();
        sums.forEach((k, v) -> {
            String name = k.contains("{") ? k.substring(0, k.indexOf('{')) : k;
            if (REPORTED.contains(name)) {
                out.put(k, v);
            }
        });
        return out;
    }
}
