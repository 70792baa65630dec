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

import javax.sql.DataSource;

import dev.waterline.sql.Statement;
import dev.waterline.sql.Statements;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowCallbackHandler;
import org.springframework.stereotype.Repository;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * The workers' side of the hook deliveries table: claim, record, and the maintenance pass. Every
 * transaction here is short and makes no network call (claim, call, record are three steps; the
 * call runs between two transactions, holding none). All run at PostgreSQL's default READ
 * COMMITTED (checked at start, {@link #checkIsolation}), where a {@code SKIP LOCKED} claim skips
 * rows other workers hold and never fails on them (at REPEATABLE READ such workers would abort
 * each other with serialization failures).
 *
 * <p>Lock order, everywhere: hook rows first (in hook id order, {@code FOR NO KEY UPDATE}, which
 * no group commit's read of a hook waits for), then delivery rows. The group commit locks chats
 * and only reads hooks; a hook's creation and deletion take its chat's row lock first. So no two
 * of these wait on each other crosswise, and nothing here makes a send wait.
 *
 * <p>Every outcome is recorded against its own claim: the claimant (this node's process) and the
 * attempt number the claim set, so an outcome that comes after its claim expired and the row was
 * claimed again is dropped, not applied to the newer claim.
 */
@Repository
class DeliveryQueueRepository {

    /** The hook a claimed delivery goes to: what its call needs; {@code userId}: who created it. */
    record Hook(String hookId, String chatId, String kind, Map<String, String> target, String secret, String userId) {
    }

    /** A delivery claimed by this node: its hook, what the call sends, and how to record it. */
    record Claimed(long id, Hook hook, String idempotencyKey, String payload, int attempt, long createdAtMillis, boolean probe) {

        String hookId() {
            return hook.hookId();
        }

        String chatId() {
            return hook.chatId();
        }

        String kind() {
            return hook.kind();
        }

        Map<String, String> target() {
            return hook.target();
        }

        String secret() {
            return hook.secret();
        }

        String userId() {
            return hook.userId();
        }
    }

    /**
     * An outcome to record: its verdict, when a retry or release is due, the error to keep;
     * {@code answered} whether the target answered (for the breaker: true resets its count, false
     * adds a failure, null, a call not made or cut short by shutdown, neither).
     */
    record Recorded(Claimed claimed, Verdict verdict, Instant dueAt, String error, Boolean answered) {
    }

    /**
     * A claim's rows; whether it looked at as many due rows as it could ({@code scanFull}: more may
     * be due); and how many of the rows it looked at it did not take ({@code cut}: over a hook's or
     * a user's quota or past the slow share's room: they can go once calls end).
     */
    record Claims(List<Claimed> rows, boolean scanFull, int cut) {
    }

    private static final String RETURNED = """
            d.id, d.hook_id, h.chat_id, h.kind, h.target::text, h.secret, d.idempotency_key, d.payload, d.attempts,
            (extract(epoch FROM d.created_at) * 1000)::bigint, h.created_by
            """;

    /**
     * A claim of one slice that takes no more of each hook, and of each user's hooks, than its share
     * ({@link HookShares.Plan}). One statement, no explicit transaction. Binds: 1..3: the plan's
     * listed hooks, text[] ids, int[] quotas, boolean[] fast; 4, 5: its listed users, text[] ids,
     * int[] rooms; 6: workers, 7: this worker's slice; 8: text[] hooks left out (no room here, or a
     * breaker known not closed); 9: the slow share's room (0: only hooks listed as fast are looked
     * at); 10: the scan, due rows looked at; 11: the room of a user not listed; 12: the slow share's
     * room again; 13: most rows; 14: claimant, 15: claim timeout ms.
     *
     * <p>{@code candidates} is the due index's ordered scan, locking what it passes
     * ({@code SKIP LOCKED}) and stopping after the scan's rows; the hook's breaker is a scalar
     * subquery on each row it passes (a join or a semi-join to hooks there let the planner drive
     * from hooks through every hook's rows and sort: 200 ms a claim under a backlog), so a row it
     * will not take (a breaker not closed that this node has not heard of yet, a hook deleted and not
     * yet purged) is neither locked nor counted. Held rows (a breaker not closed) are not in that
     * index at all. Then, among the candidates only: each hook's rows numbered in due order
     * ({@code turn}), those past its quota (1 for a hook not listed) dropped; the rest numbered per
     * user who created the hook (a primary-key probe of hooks per candidate) and cut at the user's
     * room; the rest of hooks not judged fast numbered again and cut at the slow share's room; and
     * the rows taken in turn order (every hook's first row before any hook's second), up to the
     * limit. Candidates not taken are unlocked at the statement's end. The statement answers one row
     * even when it takes none, each carrying the scan's count: a claim that took fewer rows than it
     * may while its scan was full (one hook's backlog past its quota filled it) is repeated at once,
     * with that hook left out, and the loop of one that left rows it looked at (cut by a quota) is
     * woken by the next call to end, not only by new rows.
     *
     * <p>Plan (EXPLAIN ANALYZE on PostgreSQL 17, 200,000 due rows of 32 hooks of one user and a
     * fast hook's 50 due after them, 4 slices, scan 128): the candidates a Limit over LockRows over
     * an Index Scan of {@code hook_deliveries_due} (the slice and the breaker a filter, the breaker a
     * SubPlan per row kept), the shares and users joined in memory, the user a SubPlan per candidate
     * (a primary-key probe; a join to hooks there was planned as a hash join over the whole table),
     * the three windows sorting at most the scan's rows in memory, the update a primary-key probe
     * per chosen row. With every hook given room: 512 index entries read for 128 candidates (the
     * slice keeps one in four), 24 rows taken (3 of each of 8 hooks in the window), 2.6-3.1 ms of
     * execution once warm (the statement before the users' window, on the same data and cores:
     * 1.9-2.6 ms); the user's room at 5, 5 rows taken. With the 32 hooks left out (their share
     * full): the scan passes all 200,038 of their rows one by one to reach the fast hook's, 90 ms
     * here (110-180 ms when first measured), as the claim did before shares for a hook at its
     * per-hook limit (docs/ARCHITECTURE.md, "Not built yet").
     */
    private static final String CLAIM = """
            WITH shares AS (
                SELECT * FROM unnest(?::text[], ?::int[], ?::boolean[]) AS s(hook_id, quota, fast)
            ), users AS (
                SELECT * FROM unnest(?::text[], ?::int[]) AS u(user_id, room)
            ), candidates AS MATERIALIZED (
                SELECT q.id, q.hook_id, q.due_at FROM hook_deliveries q
                WHERE q.status = 'pending' AND q.due_at <= now() AND q.id % ? = ?
                  AND q.hook_id <> ALL (?::text[])
                  AND (? > 0 OR q.hook_id IN (SELECT f.hook_id FROM shares f WHERE f.fast))
                  AND (SELECT c.breaker FROM hooks c WHERE c.hook_id = q.hook_id) = 'closed'
                ORDER BY q.due_at
                LIMIT ?
                FOR UPDATE OF q SKIP LOCKED
            ), ranked AS (
                SELECT c.id, c.due_at, (SELECT h.created_by FROM hooks h WHERE h.hook_id = c.hook_id) AS user_id,
                       coalesce(s.fast, false) AS fast, coalesce(s.quota, 1) AS quota,
                       row_number() OVER (PARTITION BY c.hook_id ORDER BY c.due_at, c.id) AS turn
                FROM candidates c LEFT JOIN shares s ON s.hook_id = c.hook_id
            ), owned AS (
                SELECT r.id, r.due_at, r.turn, r.fast, coalesce(u.room, ?) AS room,
                       row_number() OVER (PARTITION BY r.user_id ORDER BY r.turn, r.due_at, r.id) AS nth
                FROM ranked r LEFT JOIN users u ON u.user_id = r.user_id
                WHERE r.turn <= r.quota
            ), pooled AS (
                SELECT o.id, o.due_at, o.turn, o.fast,
                       row_number() OVER (PARTITION BY o.fast ORDER BY o.turn, o.due_at, o.id) AS place
                FROM owned o WHERE o.nth <= o.room
            ), chosen AS (
                SELECT p.id FROM pooled p WHERE p.fast OR p.place <= ?
                ORDER BY p.turn, p.due_at, p.id
                LIMIT ?
            ), taken AS (
                UPDATE hook_deliveries d
                SET status = 'claimed', claimed_by = ?, claim_deadline = now() + (? * interval '1 millisecond'), attempts = d.attempts + 1
                FROM hooks h
                WHERE d.id IN (SELECT id FROM chosen) AND h.hook_id = d.hook_id
                RETURNING
            """ + RETURNED.strip() + """
            )
            SELECT t.*, n.scanned FROM (SELECT count(*) AS scanned FROM candidates) n LEFT JOIN taken t ON true
            """;

    /**
     * 1: most hooks. The microphone: only the transaction holding an open hook's row lock may probe
     * it, and only a hook with a held delivery due is taken (one with nothing to probe must not keep
     * the others waiting behind it).
     */
    private static final String LOCK_COOLED_BREAKERS = """
            SELECT h.hook_id FROM hooks h
            WHERE h.breaker = 'open' AND h.reopen_at <= now()
              AND EXISTS (SELECT 1 FROM hook_deliveries d WHERE d.hook_id = h.hook_id AND d.status = 'held' AND d.due_at <= now())
            ORDER BY h.reopen_at LIMIT ? FOR NO KEY UPDATE OF h SKIP LOCKED
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

    /** 1: probe id, 2: its attempt, 3: claim timeout ms, 4: hook. */
    private static final String HALF_OPEN = """
            UPDATE hooks SET breaker = 'half_open', probe_id = ?, probe_attempt = ?, probe_deadline = now() + (? * interval '1 millisecond')
            WHERE hook_id = ?
            """;

    /**
     * 1: text[] every hook of the batch, 2: text[] those with a failure or a probe among its
     * outcomes. Their rows, in hook order (the lock order): those the breaker rule may change. A
     * hook whose outcomes were all answers is locked only if it has failures to reset (or a breaker
     * not closed), so a batch of successes locks and writes nothing.
     */
    private static final String LOCK_HOOKS = """
            SELECT hook_id, breaker, failures, probe_id, probe_attempt FROM hooks
            WHERE hook_id = ANY (?::text[]) AND (hook_id = ANY (?::text[]) OR failures <> 0 OR breaker <> 'closed')
            ORDER BY hook_id FOR NO KEY UPDATE
            """;

    /**
     * 1: breaker, 2: failures, 3: whether it opened (bool), 4: cooldown ms, 5, 6: the new breaker
     * again (a probe is kept only while half-open), 7: whether it closed (bool), 8: hook. Only the
     * hook's row: its deliveries are held or released apart, in chunks ({@link #holdChunk}).
     */
    private static final String SET_BREAKER = """
            UPDATE hooks SET breaker = ?, failures = ?,
                   reopen_at = CASE WHEN ? THEN now() + (? * interval '1 millisecond') ELSE reopen_at END,
                   probe_id = CASE WHEN ? = 'half_open' THEN probe_id ELSE NULL END,
                   probe_attempt = CASE WHEN ? = 'half_open' THEN probe_attempt ELSE NULL END,
                   closed_at = CASE WHEN ? THEN now() ELSE closed_at END
            WHERE hook_id = ?
            """;

    /**
     * 1: hook, 2: hook, 3: most rows. Brings a chunk of the hook's rows in line with its breaker as
     * it is now: a breaker not closed holds its waiting rows (the claim no longer sees them), a
     * closed one lets its held rows go, each at its own due time. Read at each chunk, so a breaker
     * that changes again while its backlog is being sorted turns the sorting round.
     */
    private static final String ALIGN_CHUNK = """
            UPDATE hook_deliveries d SET status = CASE WHEN h.breaker = 'closed' THEN 'pending' ELSE 'held' END
            FROM hooks h
            WHERE h.hook_id = ? AND d.id IN (
                SELECT q.id FROM hook_deliveries q
                WHERE q.hook_id = ? AND q.status = (SELECT CASE WHEN c.breaker = 'closed' THEN 'held' ELSE 'pending' END FROM hooks c
                                                    WHERE c.hook_id = q.hook_id)
                LIMIT ? FOR UPDATE SKIP LOCKED)
            """;

    /** 1: hook, 2: most rows. What a deleted hook left behind. */
    private static final String PURGE_CHUNK = """
            DELETE FROM hook_deliveries
            WHERE id IN (SELECT id FROM hook_deliveries WHERE hook_id = ? LIMIT ?)
            """;

    /** 1..2: pairwise bigint[] ids, int[] attempts, 3: claimant. Done deliveries are deleted (the claim must still be this one). */
    private static final String DONE = """
            DELETE FROM hook_deliveries d
            USING unnest(?::bigint[], ?::int[]) AS v(id, attempts)
            WHERE d.id = v.id AND d.attempts = v.attempts AND d.status = 'claimed' AND d.claimed_by = ?
            """;

    /**
     * 1..5: pairwise bigint[] ids, int[] attempts, timestamptz[] due times, text[] errors (null: keep
     * the last), int[] attempts to take back (1 for a call not made), 6: claimant. Back to pending,
     * or held when the breaker (just updated in this transaction) is not closed.
     */
    private static final String RETRY = """
            UPDATE hook_deliveries d
            SET status = CASE WHEN h.breaker = 'closed' THEN 'pending' ELSE 'held' END,
                due_at = v.due_at, last_error = coalesce(v.error, d.last_error), attempts = d.attempts - v.back,
                claimed_by = NULL, claim_deadline = NULL
            FROM unnest(?::bigint[], ?::int[], ?::timestamptz[], ?::text[], ?::int[]) AS v(id, attempts, due_at, error, back), hooks h
            WHERE d.id = v.id AND d.attempts = v.attempts AND d.status = 'claimed' AND d.claimed_by = ? AND h.hook_id = d.hook_id
            """;

    /** 1..3: pairwise bigint[] ids, int[] attempts, text[] errors, 4: claimant. */
    private static final String DEAD = """
            UPDATE hook_deliveries d
            SET status = 'dead', dead_at = now(), last_error = v.error, claimed_by = NULL, claim_deadline = NULL
            FROM unnest(?::bigint[], ?::int[], ?::text[]) AS v(id, attempts, error)
            WHERE d.id = v.id AND d.attempts = v.attempts AND d.status = 'claimed' AND d.claimed_by = ?
            """;

    /** Only one node runs the maintenance statements at a time (they touch the same rows). */
    private static final String MAINTENANCE_LOCK = """
            SELECT pg_try_advisory_xact_lock(hashtext('waterline.hooks.maintenance'))
            """;

    /** A probe whose worker died: the breaker opens again, due for a new probe at once. */
    private static final String EXPIRE_PROBES = """
            UPDATE hooks SET breaker = 'open', reopen_at = now(), probe_id = NULL, probe_attempt = NULL
            WHERE hook_id IN (SELECT hook_id FROM hooks WHERE breaker = 'half_open' AND probe_deadline < now()
                              ORDER BY hook_id FOR NO KEY UPDATE)
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

    /** Hooks whose rows must change status: held rows of closed breakers, pending rows of breakers not closed. */
    private static final String TO_SORT = """
            SELECT h.hook_id FROM hooks h
            WHERE (h.breaker <> 'closed' AND EXISTS (SELECT 1 FROM hook_deliveries d WHERE d.hook_id = h.hook_id AND d.status = 'pending'))
               OR (h.breaker = 'closed' AND EXISTS (SELECT 1 FROM hook_deliveries d WHERE d.hook_id = h.hook_id AND d.status = 'held'))
            """;

    /**
     * 1: the hook id to walk on from ('' at the start), 2: most hooks. The hook ids that have
     * deliveries, from the one after 1 on, and whether each hook still exists: a walk over
     * {@code hook_deliveries_by_hook} that skips from one hook id to the next (one index probe per
     * hook, a primary-key probe of hooks each), so a pass costs at most 2 probes per hook and never
     * reads a hook's rows. The {@code SELECT DISTINCT … NOT EXISTS} it replaces read the whole table
     * every maintenance pass. A walk cut at 2 is taken up from there by the next pass.
     */
    private static final String HOOKS_WITH_DELIVERIES = """
            WITH RECURSIVE walk(hook_id, n) AS (
                (SELECT hook_id, 1 FROM hook_deliveries WHERE hook_id > ? ORDER BY hook_id LIMIT 1)
                UNION ALL
                SELECT (SELECT d.hook_id FROM hook_deliveries d WHERE d.hook_id > w.hook_id ORDER BY d.hook_id LIMIT 1), w.n + 1
                FROM walk w WHERE w.hook_id IS NOT NULL AND w.n < ?
            )
            SELECT w.hook_id, EXISTS (SELECT 1 FROM hooks h WHERE h.hook_id = w.hook_id) FROM walk w WHERE w.hook_id IS NOT NULL
            """;

    /** Hooks this node's claims leave out: breakers not closed. */
    private static final String NOT_CLOSED = """
            SELECT hook_id FROM hooks WHERE breaker <> 'closed'
            """;

    /**
     * 1: the cap. The backlog gauges from bounded index reads (V12): the deliveries not done
     * counted up to the cap, the oldest one's age from the first entry of
     * {@code hook_deliveries_live}, and the dead letters counted up to the cap on
     * {@code hook_deliveries_dead}. A count at the cap reads "at least the cap". The single
     * {@code count(*) FILTER} it replaces read the whole table every maintenance pass.
     */
    private static final String BACKLOG = """
            SELECT (SELECT count(*) FROM (SELECT 1 FROM hook_deliveries WHERE status <> 'dead' LIMIT ?) live),
                   coalesce((SELECT extract(epoch FROM now() - created_at)::bigint FROM hook_deliveries
                             WHERE status <> 'dead' ORDER BY created_at LIMIT 1), 0),
                   (SELECT count(*) FROM (SELECT 1 FROM hook_deliveries WHERE status = 'dead' LIMIT ?) dead)
            """;

    /**
     * 1: the retention in ms, 2: most rows. One chunk of the dead letters older than the retention,
     * oldest first on {@code hook_deliveries_dead}; {@code SKIP LOCKED}, so nodes deleting at once
     * (and a replay holding a row) never wait on each other: each takes rows the others do not hold.
     */
    private static final String DELETE_DEAD_CHUNK = """
            DELETE FROM hook_deliveries WHERE id IN (
                SELECT id FROM hook_deliveries
                WHERE status = 'dead' AND dead_at < now() - (? * interval '1 millisecond')
                ORDER BY dead_at LIMIT ? FOR UPDATE SKIP LOCKED)
            """;

    /** The backlog gauges count up to this many rows: past it they read "at least this many". */
    static final int GAUGE_CAP = 100_000;
    static final int CHUNK = 5_000;
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final TypeReference<Map<String, String>> TARGET = new TypeReference<>() {
    };

    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;

    DeliveryQueueRepository(DataSource dataSource, PlatformTransactionManager transactions) {
        // a template of its own: every statement bounded by a query timeout, with no transaction
        // (and its round trips) for the claim, which is one statement
        this.jdbc = new JdbcTemplate(dataSource);
        this.jdbc.setQueryTimeout(10);
        this.tx = new TransactionTemplate(transactions);
        this.tx.setTimeout(10);
    }

    /** The claim's rule holds only at READ COMMITTED: refuse to start on a database that defaults to another level. */
    void checkIsolation() {
        String level = jdbc.queryForObject("SHOW default_transaction_isolation", String.class);
        if (!"read committed".equalsIgnoreCase(level)) {
            throw new IllegalStateException("the hook workers need PostgreSQL's default_transaction_isolation to be read committed,"
                    + " not " + level + ": SKIP LOCKED claims at a stricter level abort each other");
        }
    }

    private static Claimed claimed(ResultSet rs, boolean probe) throws SQLException {
        Hook hook = new Hook(rs.getString(2), rs.getString(3), rs.getString(4), JSON.readValue(rs.getString(5), TARGET), rs.getString(6),
                rs.getString(11));
        return new Claimed(rs.getLong(1), hook, rs.getString(7), rs.getString(8), rs.getInt(9), rs.getLong(10), probe);
    }

    /** Claims due deliveries of one slice within {@code plan}'s shares (one statement, committed on its own). */
    Claims claim(String claimant, Duration claimTimeout, int workers, int slice, HookShares.Plan plan) {
        long[] scanned = {0};
        List<Claimed> rows = new ArrayList<>();
        jdbc.query(CLAIM, (RowCallbackHandler) rs -> {
            scanned[0] = rs.getLong(12);
            rs.getLong(1);
            if (!rs.wasNull()) {
                rows.add(claimed(rs, false));
            }
        }, plan.hooks(), plan.quotas(), plan.fast(), plan.users(), plan.userRooms(), workers, slice, plan.leftOut(), plan.slowRoom(),
                plan.scan(), plan.newUserRoom(), plan.slowRoom(), plan.total(), claimant, claimTimeout.toMillis());
        return new Claims(rows, scanned[0] >= plan.scan(), (int) scanned[0] - rows.size());
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
                    jdbc.update(HALF_OPEN, one.getFirst().id(), one.getFirst().attempt(), claimTimeout.toMillis(), hook);
                    probes.add(one.getFirst());
                }
            }
            return probes;
        });
    }

    /** What recording a batch changed about breakers: the hooks whose breaker opened, and those that closed. */
    record Recording(List<String> opened, List<String> closed) {
    }

    /**
     * Records a batch of outcomes in one short transaction with {@code synchronous_commit = off}:
     * at-least-once makes a lost outcome harmless (the row is still claimed, its claim expires, it
     * is sent again and the receiver drops the repeat by its idempotency key), so this commit need
     * not wait for the WAL flush. The breaker rows come first (the lock order); a probe's outcome
     * decides its breaker only while the breaker still names that probe.
     */
    Recording record(String claimant, List<Recorded> outcomes, int threshold, Duration cooldown) {
        return tx.execute(s -> {
            Map<String, List<Recorded>> byHook = new TreeMap<>();
            for (Recorded r : outcomes) {
                // a call not made tells the breaker nothing, unless it was the probe
                if (r.answered() != null || r.claimed().probe()) {
                    byHook.computeIfAbsent(r.claimed().hookId(), k -> new ArrayList<>()).add(r);
                }
            }
            List<String> opened = new ArrayList<>();
            List<String> closed = new ArrayList<>();
            Map<String, Breaker.State> states = new HashMap<>();
            Map<String, long[]> probes = new HashMap<>();
            String[] failing = byHook.entrySet().stream()
                    .filter(e -> e.getValue().stream().anyMatch(r -> r.claimed().probe() || !r.answered()))
                    .map(Map.Entry::getKey).toArray(String[]::new);
            List<Statement> first = new ArrayList<>(2);
            first.add(Statement.of("SET LOCAL synchronous_commit = off", null));
            if (!byHook.isEmpty()) {
                first.add(Statement.of(LOCK_HOOKS, rs -> {
                    states.put(rs.getString(1), new Breaker.State(rs.getString(2), rs.getInt(3)));
                    long probe = rs.getLong(4);
                    if (!rs.wasNull()) {
                        probes.put(rs.getString(1), new long[] {probe, rs.getInt(5)});
                    }
                }, byHook.keySet().toArray(String[]::new), failing));
            }
            Statements.run(jdbc, first);
            List<Statement> writes = new ArrayList<>();
            for (var e : byHook.entrySet()) {
                Breaker.State state = states.get(e.getKey());
                if (state == null) {
                    continue;   // nothing to change (all answered, no failures), or deleted meanwhile
                }
                long[] probe = probes.get(e.getKey());
                // the probe named on the row, and that claim of it: a late outcome of an earlier probe of the same row decides nothing
                List<Breaker.Result> results = e.getValue().stream().map(r -> {
                    boolean named = r.claimed().probe() && probe != null && probe[0] == r.claimed().id() && probe[1] == r.claimed().attempt();
                    return r.answered() == null ? Breaker.Result.notMade(named) : new Breaker.Result(r.answered(), named);
                }).toList();
                Breaker.Next next = Breaker.after(state, results, threshold);
                if (next.breaker().equals(state.breaker()) && next.failures() == state.failures()) {
                    continue;
                }
                // a probe not made: open again with its cooldown over, so the next probe may go (H5: it is the first made)
                writes.add(Statement.of(SET_BREAKER, null, next.breaker(), next.failures(), next.opened() || next.probeAgain(),
                        next.probeAgain() ? 0 : cooldown.toMillis(), next.breaker(), next.breaker(), next.closed(), e.getKey()));
                if (next.opened() && !Breaker.OPEN.equals(state.breaker())) {
                    opened.add(e.getKey());
                }
                if (next.closed()) {
                    closed.add(e.getKey());
                }
            }
            List<Long> doneIds = new ArrayList<>(), retryIds = new ArrayList<>(), deadIds = new ArrayList<>();
            List<Integer> doneAttempts = new ArrayList<>(), retryAttempts = new ArrayList<>(), retryBack = new ArrayList<>(),
                    deadAttempts = new ArrayList<>();
            List<Timestamp> retryDue = new ArrayList<>();
            List<String> retryErrors = new ArrayList<>(), deadErrors = new ArrayList<>();
            for (Recorded r : outcomes) {
                Claimed c = r.claimed();
                switch (r.verdict()) {
                    case DONE -> {
                        doneIds.add(c.id());
                        doneAttempts.add(c.attempt());
                    }
                    case RETRY, RELEASE -> {
                        retryIds.add(c.id());
                        retryAttempts.add(c.attempt());
                        retryDue.add(Timestamp.from(r.dueAt()));
                        retryErrors.add(r.error());
                        retryBack.add(r.verdict() == Verdict.RELEASE ? 1 : 0);
                    }
                    case DEAD -> {
                        deadIds.add(c.id());
                        deadAttempts.add(c.attempt());
                        deadErrors.add(r.error());
                    }
                }
            }
            if (!doneIds.isEmpty()) {
                writes.add(Statement.of(DONE, null, longs(doneIds), ints(doneAttempts), claimant));
            }
            if (!retryIds.isEmpty()) {
                writes.add(Statement.of(RETRY, null, longs(retryIds), ints(retryAttempts), retryDue.toArray(Timestamp[]::new),
                        retryErrors.toArray(String[]::new), ints(retryBack), claimant));
            }
            if (!deadIds.isEmpty()) {
                writes.add(Statement.of(DEAD, null, longs(deadIds), ints(deadAttempts), deadErrors.toArray(String[]::new), claimant));
            }
            if (!writes.isEmpty()) {
                Statements.run(jdbc, writes);
            }
            return new Recording(opened, closed);
        });
    }

    private static long[] longs(List<Long> v) {
        return v.stream().mapToLong(Long::longValue).toArray();
    }

    private static int[] ints(List<Integer> v) {
        return v.stream().mapToInt(Integer::intValue).toArray();
    }

    /**
     * One chunk of bringing a hook's rows in line with its breaker, in a transaction of its own (a
     * breaker's whole backlog in one would hold its locks for as long as it takes); returns how
     * many rows moved.
     */
    int alignChunk(String hookId) {
        return jdbc.update(ALIGN_CHUNK, hookId, hookId, CHUNK);
    }

    /** One chunk of deleting what a deleted hook left; returns how many rows went. */
    int purgeChunk(String hookId) {
        return jdbc.update(PURGE_CHUNK, hookId, CHUNK);
    }

    /** What one maintenance pass did; null when another node held the pass. */
    record Maintained(int expiredClaims, int expiredProbes, List<String> toSort) {
    }

    Maintained maintain() {
        return tx.execute(s -> {
            if (!Boolean.TRUE.equals(jdbc.queryForObject(MAINTENANCE_LOCK, Boolean.class))) {
                return null;
            }
            int probes = jdbc.update(EXPIRE_PROBES);
            int claims = jdbc.update(EXPIRE_CLAIMS);
            List<String> toSort = jdbc.queryForList(TO_SORT, String.class);
            return new Maintained(claims, probes, toSort);
        });
    }

    /** One stretch of the walk over the hooks that have deliveries: the orphans found, and where to go on from ('' once it ended). */
    record Walk(List<String> orphans, String next) {
    }

    /** Hooks that no longer exist but have deliveries (a deletion whose purge did not finish), at most {@code most} hooks looked at after {@code after}. */
    Walk orphans(String after, int most) {
        List<String> orphans = new ArrayList<>();
        String[] last = {null};
        int[] seen = {0};
        jdbc.query(HOOKS_WITH_DELIVERIES, (RowCallbackHandler) rs -> {
            last[0] = rs.getString(1);
            seen[0]++;
            if (!rs.getBoolean(2)) {
                orphans.add(last[0]);
            }
        }, after, most);
        return new Walk(orphans, seen[0] < most || last[0] == null ? "" : last[0]);
    }

    List<String> notClosed() {
        return jdbc.queryForList(NOT_CLOSED, String.class);
    }

    /** The backlog gauges: deliveries not done and dead letters, each counted up to {@link #GAUGE_CAP}; the oldest not done's age. */
    record Backlog(long rows, long oldestSeconds, long dead) {
    }

    Backlog backlog() {
        return jdbc.queryForObject(BACKLOG, (rs, i) -> new Backlog(rs.getLong(1), rs.getLong(2), rs.getLong(3)), GAUGE_CAP, GAUGE_CAP);
    }

    /** One chunk of the dead letters older than {@code retention} deleted; answers how many went. */
    int deleteDeadChunk(Duration retention) {
        return jdbc.update(DELETE_DEAD_CHUNK, retention.toMillis(), CHUNK);
    }
}
