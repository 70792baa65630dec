/**
 * Hooks (PROTOCOL.md §7, chat → services): every message of a chat delivered to HTTP endpoints and
 * brokers at least once. Deliveries are inserted in the message's own transaction through ingest's
 * commit-participant seam; workers claim them by slice with {@code SKIP LOCKED} ({@code HookClaimer}),
 * call the target with no transaction open ({@code HookCaller}, the verdict a pure {@code Verdicts}),
 * and record the outcome in a second short transaction ({@code HookRecorder}); {@code HookWorkers}
 * runs the three, {@code HookMaintenance} the periodic upkeep (expired claims, gauges, dead letters
 * past their retention); retries back off
 * (or obey {@code Retry-After}), permanent failures and spent budgets go to the dead letters, a
 * per-hook circuit breaker lets exactly one probe through across the cluster, and an SSRF guard
 * checks every target address. The sinks ({@code hooks.sinks}) are one adapter per kind. Calls
 * {@code ingest}, {@code presence} (who is live elsewhere, for offline events), {@code session},
 * {@code sql}, {@code web}, {@code auth}, {@code lifecycle} and {@code metrics}.
 */
package dev.waterline.hooks;
