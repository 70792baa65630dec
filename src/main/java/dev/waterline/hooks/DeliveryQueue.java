package dev.waterline.hooks;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.waterline.sql.Statement;
import dev.waterline.sql.Statements;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Repository;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * The workers' side of the hook deliveries table: claim, record, and the maintenance pass. Every
 * transaction here is short and makes no network call (claim, call, record are three steps; the
 * call runs between two transactions, holding none). All run at READ COMMITTED, where a
 * {@code SKIP LOCKED} claim skips rows other workers hold and never fails on them (at REPEATABLE
 * READ such workers would abort each other with serialization failures).
 *
 * <p>Lock order, everywhere: hook rows first (in hook id order), then delivery rows. A hook's
 * deletion takes its chat's share lock and then the hook row (cascading to its deliveries); the
 * group commit locks chats and only reads hooks. So no two of these wait on each other crosswise.
 */
@Repository
class DeliveryQueue {

    /** A delivery claimed by this node: what the call needs, and how to record it. */
    record Claimed(long id, String hookId, String chatId, String kind, Map<String, String> target, String secret,
                   String idempotencyKey, String payload, int attempt, long createdAtMillis, boolean probe) {
    }

    /**
     * An outcome to record: {@code ok}, {@code retry} (with when) or {@code dead}; {@code answered}
     * whether the target answered (for the breaker: true resets its count, false adds a failure,
     * null, a call not made, neither).
     */
    record Recorded(Claimed claimed, String outcome, Instant dueAt, String error, Boolean answered) {
    }

    private static final String RETURNED = """
            d.id, d.hook_id, h.chat_id, h.kind, h.target::text, h.secret, d.idempotency_key, d.payload, d.attempts,
            (extract(epoch FROM d.created_at) * 1000)::bigint
            """;

    /**
     * 1: claimant, 2: claim timeout ms, 3: workers, 4: this worker's slice, 5: text[] hooks this node
     * has no room for now (its per-hook bulkhead is full), 6: most rows. Held rows (a breaker not
     * closed) are not in hook_deliveries_due; a row born pending while its breaker opened is skipped
     * by the EXISTS and held by the maintenance pass.
     */
    private static final String CLAIM = """
            UPDATE hook_deliveries d
            SET status = 'claimed', claimed_by = ?, claim_deadline = now() + (? * interval '1 millisecond'), attempts = d.attempts + 1
            FROM hooks h
            WHERE d.id IN (
                SELECT q.id FROM hook_deliveries q
                WHERE q.status = 'pending' AND q.due_at <= now() AND q.id % ? = ?
                  AND q.hook_id <> ALL (?::text[])
                  AND EXISTS (SELECT 1 FROM hooks c WHERE c.hook_id = q.hook_id AND c.breaker = 'closed')
                ORDER BY q.due_at
                LIMIT ?
                FOR UPDATE OF q SKIP LOCKED)
              AND h.hook_id = d.hook_id
            RETURNING
            """ + RETURNED;

    /** 1: most hooks. The microphone: only the transaction holding an open hook's row lock may probe it. */
    private static final String LOCK_COOLED_BREAKERS = """
            SELECT hook_id FROM hooks WHERE breaker = 'open' AND reopen_at <= now()
            ORDER BY reopen_at LIMIT ? FOR UPDATE SKIP LOCKED
            """;

    /** 1: claimant, 2: claim timeout ms, 3: hook. The probe: the hook's held delivery due first. */
    private static final String CLAIM_PROBE = """
            UPDATE hook_deliveries d
            SET status = 'claimed', claimed_by = ?, claim_deadline = now() + (? * interval '1 millisecond'), attempts = d.attempts + 1
            FROM hooks h
            WHERE d.id = (SELECT id FROM hook_deliveries WHERE hook_id = ? AND status = 'held' AND due_at <= now()
                          ORDER BY due_at LIMIT 1 FOR UPDATE SKIP LOCKED)
              AND h.hook_id = d.hook_id
            RETURNING
            """ + RETURNED;

    /** 1: probe id, 2: claim timeout ms, 3: hook. */
    private static final String HALF_OPEN = """
            UPDATE hooks SET breaker = 'half_open', probe_id = ?, probe_deadline = now() + (? * interval '1 millisecond')
            WHERE hook_id = ?
            """;

    /** 1: text[] hooks. Their rows, in hook order (the lock order). */
    private static final String LOCK_HOOKS = """
            SELECT hook_id, breaker, failures FROM hooks WHERE hook_id = ANY (?::text[]) ORDER BY hook_id FOR UPDATE
            """;

    /** 1: breaker, 2: failures, 3: opened (bool), 4: cooldown ms, 5: closed (bool), 6: hook. */
    private static final String SET_BREAKER = """
            UPDATE hooks SET breaker = ?, failures = ?,
                   reopen_at = CASE WHEN ? THEN now() + (? * interval '1 millisecond') ELSE reopen_at END,
                   probe_id = CASE WHEN breaker = 'half_open' AND ? <> 'half_open' THEN NULL ELSE probe_id END,
                   closed_at = CASE WHEN ? THEN now() ELSE closed_at END
            WHERE hook_id = ?
            """;

    /** 1: hook. An opened breaker holds the hook's waiting rows, so the claim no longer sees them. */
    private static final String HOLD = """
            UPDATE hook_deliveries SET status = 'held' WHERE hook_id = ? AND status = 'pending'
            """;

    /** 1: hook. A closed breaker lets its held rows go, each at its own due time. */
    private static final String RELEASE = """
            UPDATE hook_deliveries SET status = 'pending' WHERE hook_id = ? AND status = 'held'
            """;

    /** 1: bigint[] ids, 2: claimant. Done deliveries are deleted (the claim must still be ours). */
    private static final String DONE = """
            DELETE FROM hook_deliveries WHERE id = ANY (?::bigint[]) AND status = 'claimed' AND claimed_by = ?
            """;

    /**
     * 1..3: pairwise bigint[] ids, timestamptz[] due times, text[] errors, 4: claimant. Back to
     * pending, or held when the breaker (just updated in this transaction) is not closed.
     */
    private static final String RETRY = """
            UPDATE hook_deliveries d
            SET status = CASE WHEN h.breaker = 'closed' THEN 'pending' ELSE 'held' END,
                due_at = v.due_at, last_error = v.error, claimed_by = NULL, claim_deadline = NULL
            FROM unnest(?::bigint[], ?::timestamptz[], ?::text[]) AS v(id, due_at, error), hooks h
            WHERE d.id = v.id AND d.status = 'claimed' AND d.claimed_by = ? AND h.hook_id = d.hook_id
            """;

    /** 1..2: pairwise bigint[] ids, text[] errors, 3: claimant. */
    private static final String DEAD = """
            UPDATE hook_deliveries d
            SET status = 'dead', dead_at = now(), last_error = v.error, claimed_by = NULL, claim_deadline = NULL
            FROM unnest(?::bigint[], ?::text[]) AS v(id, error)
            WHERE d.id = v.id AND d.status = 'claimed' AND d.claimed_by = ?
            """;

    /** Only one node runs the maintenance statements at a time (they touch the same rows). */
    private static final String MAINTENANCE_LOCK = """
            SELECT pg_try_advisory_xact_lock(hashtext('waterline.hooks.maintenance'))
            """;

    /** Claims past their deadline return (held when their breaker is not closed). */
    private static final String EXPIRE_CLAIMS = """
            UPDATE hook_deliveries d
            SET status = CASE WHEN h.breaker = 'closed' THEN 'pending' ELSE 'held' END,
                claimed_by = NULL, claim_deadline = NULL, due_at = now(),
                last_error = 'claim expired: its node or worker stopped before recording an outcome'
            FROM hooks h
            WHERE d.status = 'claimed' AND d.claim_deadline < now() AND h.hook_id = d.hook_id
            """;

    /** A probe whose worker died: the breaker opens again, due for a new probe at once. */
    private static final String EXPIRE_PROBES = """
            UPDATE hooks SET breaker = 'open', reopen_at = now(), probe_id = NULL
            WHERE hook_id IN (SELECT hook_id FROM hooks WHERE breaker = 'half_open' AND probe_deadline < now()
                              ORDER BY hook_id FOR UPDATE)
            """;

    /** Rows born held while their breaker was closing (the insert read the old state): let go. */
    private static final String RELEASE_STRAYS = """
            UPDATE hook_deliveries d SET status = 'pending'
            FROM hooks h
            WHERE h.breaker = 'closed' AND h.closed_at > now() - interval '10 minutes'
              AND d.hook_id = h.hook_id AND d.status = 'held'
            """;

    /** Rows born pending while their breaker was opening: held. */
    private static final String HOLD_STRAYS = """
            UPDATE hook_deliveries d SET status = 'held'
            FROM hooks h
            WHERE h.breaker <> 'closed' AND d.hook_id = h.hook_id AND d.status = 'pending'
            """;

    private static final String BACKLOG = """
            SELECT count(*) FILTER (WHERE status <> 'dead'),
                   coalesce(extract(epoch FROM now() - min(created_at) FILTER (WHERE status <> 'dead')), 0)::bigint,
                   count(*) FILTER (WHERE status = 'dead')
            FROM hook_deliveries
            """;

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final TypeReference<Map<String, String>> TARGET = new TypeReference<>() {
    };

    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;
    private final TransactionTemplate relaxed;

    DeliveryQueue(JdbcTemplate jdbc, PlatformTransactionManager transactions) {
        this.jdbc = jdbc;
        this.tx = new TransactionTemplate(transactions);
        this.tx.setIsolationLevel(TransactionDefinition.ISOLATION_READ_COMMITTED);
        this.tx.setTimeout(10);
        this.relaxed = new TransactionTemplate(transactions);
        this.relaxed.setIsolationLevel(TransactionDefinition.ISOLATION_READ_COMMITTED);
        this.relaxed.setTimeout(10);
    }

    private static Claimed claimed(ResultSet rs, boolean probe) throws SQLException {
        return new Claimed(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4), JSON.readValue(rs.getString(5), TARGET),
                rs.getString(6), rs.getString(7), rs.getString(8), rs.getInt(9), rs.getLong(10), probe);
    }

    /** Claims up to {@code limit} due deliveries of one slice (one short transaction). */
    List<Claimed> claim(String claimant, Duration claimTimeout, int workers, int slice, String[] fullHooks, int limit) {
        return tx.execute(s -> jdbc.query(CLAIM, (rs, i) -> claimed(rs, false), claimant, claimTimeout.toMillis(), workers, slice,
                fullHooks, limit));
    }

    /**
     * For each open breaker whose cooldown has ended and that has a held delivery due, the one
     * probe: claimed, and the breaker half-open with it, in the transaction that holds the hook's
     * row lock. Any other worker, here or on another node, skips the locked row, and after commit
     * finds the breaker half-open: exactly one probe per cooldown, cluster-wide.
     */
    List<Claimed> claimProbes(String claimant, Duration claimTimeout, int most) {
        return tx.execute(s -> {
            List<Claimed> probes = new ArrayList<>();
            for (String hook : jdbc.queryForList(LOCK_COOLED_BREAKERS, String.class, most)) {
                List<Claimed> one = jdbc.query(CLAIM_PROBE, (rs, i) -> claimed(rs, true), claimant, claimTimeout.toMillis(), hook);
                if (!one.isEmpty()) {
                    jdbc.update(HALF_OPEN, one.getFirst().id(), claimTimeout.toMillis(), hook);
                    probes.add(one.getFirst());
                }
            }
            return probes;
        });
    }

    /** What recording a batch changed about breakers: the hooks whose breaker opened. */
    record Recording(List<String> opened) {
    }

    /**
     * Records a batch of outcomes in one short transaction with {@code synchronous_commit = off}:
     * at-least-once makes a lost outcome harmless (the row is still claimed, its claim expires, it
     * is sent again and the receiver drops the repeat by its idempotency key), so this commit need
     * not wait for the WAL flush. The breaker rows come first (the lock order).
     */
    Recording record(String claimant, List<Recorded> outcomes, int threshold, Duration cooldown) {
        return relaxed.execute(s -> {
            jdbc.execute("SET LOCAL synchronous_commit = off");
            Map<String, List<Breaker.Result>> byHook = new TreeMap<>();
            for (Recorded r : outcomes) {
                if (r.answered() == null) {
                    continue;
                }
                byHook.computeIfAbsent(r.claimed().hookId(), k -> new ArrayList<>()).add(new Breaker.Result(r.answered(), r.claimed().probe()));
            }
            List<String> opened = new ArrayList<>();
            Map<String, Breaker.State> states = new HashMap<>();
            jdbc.query(LOCK_HOOKS, rs -> {
                states.put(rs.getString(1), new Breaker.State(rs.getString(2), rs.getInt(3)));
            }, (Object) byHook.keySet().toArray(String[]::new));
            for (var e : byHook.entrySet()) {
                Breaker.State state = states.get(e.getKey());
                if (state == null) {
                    continue;   // deleted meanwhile: its deliveries went with it
                }
                Breaker.Next next = Breaker.after(state, e.getValue(), threshold);
                if (next.breaker().equals(state.breaker()) && next.failures() == state.failures()) {
                    continue;
                }
                jdbc.update(SET_BREAKER, next.breaker(), next.failures(), next.opened(), cooldown.toMillis(), next.breaker(),
                        next.closed(), e.getKey());
                if (next.opened() && !Breaker.OPEN.equals(state.breaker())) {
                    jdbc.update(HOLD, e.getKey());
                    opened.add(e.getKey());
                }
                if (next.closed()) {
                    jdbc.update(RELEASE, e.getKey());
                }
            }
            List<Long> done = new ArrayList<>();
            List<Long> retryIds = new ArrayList<>();
            List<Timestamp> retryDue = new ArrayList<>();
            List<String> retryErrors = new ArrayList<>();
            List<Long> deadIds = new ArrayList<>();
            List<String> deadErrors = new ArrayList<>();
            for (Recorded r : outcomes) {
                switch (r.outcome()) {
                    case "ok" -> done.add(r.claimed().id());
                    case "retry" -> {
                        retryIds.add(r.claimed().id());
                        retryDue.add(Timestamp.from(r.dueAt()));
                        retryErrors.add(r.error());
                    }
                    default -> {
                        deadIds.add(r.claimed().id());
                        deadErrors.add(r.error());
                    }
                }
            }
            List<Statement> writes = new ArrayList<>(3);
            if (!done.isEmpty()) {
                writes.add(Statement.of(DONE, null, done.stream().mapToLong(Long::longValue).toArray(), claimant));
            }
            if (!retryIds.isEmpty()) {
                writes.add(Statement.of(RETRY, null, retryIds.stream().mapToLong(Long::longValue).toArray(),
                        retryDue.toArray(Timestamp[]::new), retryErrors.toArray(String[]::new), claimant));
            }
            if (!deadIds.isEmpty()) {
                writes.add(Statement.of(DEAD, null, deadIds.stream().mapToLong(Long::longValue).toArray(),
                        deadErrors.toArray(String[]::new), claimant));
            }
            if (!writes.isEmpty()) {
                Statements.run(jdbc, writes);
            }
            return new Recording(opened);
        });
    }

    /** What one maintenance pass did; null when another node held the pass. */
    record Maintained(int expiredClaims, int expiredProbes, int released, int held) {
    }

    Maintained maintain() {
        return tx.execute(s -> {
            if (!Boolean.TRUE.equals(jdbc.queryForObject(MAINTENANCE_LOCK, Boolean.class))) {
                return null;
            }
            int probes = jdbc.update(EXPIRE_PROBES);
            int claims = jdbc.update(EXPIRE_CLAIMS);
            int released = jdbc.update(RELEASE_STRAYS);
            int held = jdbc.update(HOLD_STRAYS);
            return new Maintained(claims, probes, released, held);
        });
    }

    /** rows not done, age of the oldest in seconds, dead letters. */
    long[] backlog() {
        return jdbc.queryForObject(BACKLOG, (rs, i) -> new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)});
    }
}
