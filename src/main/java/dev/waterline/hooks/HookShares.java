package dev.waterline.hooks;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Fair shares of this node's hook calls (docs/ARCHITECTURE.md, "Hooks", H6): before each claim,
 * how many more deliveries each hook may have claimed here. A claim takes no more of a hook than
 * it may call at once, so nothing claimed ever waits for a permit, and one user's slow targets are
 * held to their own share.
 *
 * <p>The rule. A hook is <em>fast</em> once a call of it ended within {@code slow-call}: its limit
 * then starts at 2 and grows by one with each fast call (so it doubles with each round of calls, as
 * TCP's slow start does), up to {@code per-hook-concurrency}. A call that takes longer, or is still out past {@code slow-call}, makes it slow again,
 * its limit back to 1. Hooks judged slow and hooks not judged yet (new here, or idle long enough
 * to be forgotten) share the <em>slow share</em>, {@code slow-share} × {@code max-in-flight}
 * calls: each of those that has calls out may hold an equal part of it, counting one hook more than
 * there are (room for a newcomer), at least 1 and at most {@code per-hook-concurrency}; a hook this
 * node knows nothing of gets one call. Fast hooks have whatever of {@code max-in-flight} the calls
 * out leave, and the slow share never leaves them less than the rest of {@code max-in-flight}:
 * however many targets are slow, a fast hook's delivery finds room.
 *
 * <p>What a claim is told ({@link Plan}): the hooks it leaves out (no room), each listed hook's
 * quota and pool, and for hooks not listed one call each out of the slow share's room. A hook idle
 * here is listed only while the slow share is tight (its room smaller than a claim's scan), so in
 * the usual case the lists hold only the hooks with calls out (at most {@code max-in-flight}).
 *
 * <p>Concurrency. Several claim loops plan at once: a plan reserves what it offers (per hook, and
 * of both pools) until {@link #settle} replaces the reservation with the calls the claim took.
 * Pure: time is passed in (nanoseconds), nothing here does I/O; one lock guards it all.
 */
final class HookShares {

    /** Known hooks idle this long are forgotten (judged again on their next call). */
    static final long FORGET_AFTER_NANOS = TimeUnit.MINUTES.toNanos(10);
    /** A claim looks at this many due rows for each one it may take (the rest are other hooks' or over a quota). */
    static final int SCAN_FACTOR = 4;

    /** The limits, from {@link HookProperties}. */
    record Limits(int maxInFlight, int perHook, int slowShare, long slowCallNanos) {

        static Limits of(HookProperties p) {
            return new Limits(p.maxInFlight(), p.perHookConcurrency(), Math.max(1, (int) Math.floor(p.maxInFlight() * p.slowShare())),
                    p.slowCall().toNanos());
        }
    }

    /** One call out: its hook, and when it started. Compared by identity (two calls may start in the same nanosecond). */
    static final class Call {
        final String hookId;
        final long startedNanos;

        Call(String hookId, long startedNanos) {
            this.hookId = hookId;
            this.startedNanos = startedNanos;
        }
    }

    /**
     * What one claim may take: {@code total} rows in all, of which at most {@code slowRoom} of
     * hooks not judged fast; none of {@code leftOut}; of each of {@code hooks} at most its
     * {@code quotas} entry ({@code fast}: counted against the total only); of any other hook one.
     * {@code scan}: due rows the claim looks at.
     */
    record Plan(String[] leftOut, String[] hooks, int[] quotas, boolean[] fast, int slowRoom, int total, int scan) {

        static final Plan NONE = new Plan(new String[0], new String[0], new int[0], new boolean[0], 0, 0, 0);

        /** Whether a claim could take anything: room, and some hook it may take from. */
        boolean claimable() {
            if (total <= 0) {
                return false;
            }
            if (slowRoom > 0) {
                return true;
            }
            for (boolean f : fast) {
                if (f) {
                    return true;
                }
            }
            return false;
        }
    }

    private static final class Lane {
        final Set<Call> calls = new HashSet<>();
        int reserved;
        int limit = 1;
        boolean fast;
        long lastNanos;

        boolean busy() {
            return !calls.isEmpty() || reserved > 0;
        }
    }

    private final Limits limits;
    private final Map<String, Lane> lanes = new HashMap<>();
    private int reservedTotal;
    private int reservedSlow;

    HookShares(Limits limits) {
        this.limits = limits;
    }

    /** A call out past {@code slow-call} judges its hook slow before it ends. */
    private void judge(long now) {
        for (Lane lane : lanes.values()) {
            if (lane.fast) {
                for (Call c : lane.calls) {
                    if (now - c.startedNanos >= limits.slowCallNanos()) {
                        lane.fast = false;
                        lane.limit = 1;
                        break;
                    }
                }
            }
        }
    }

    /**
     * The plan of a claim of at most {@code batch} rows, its room reserved until {@link #settle};
     * {@code notClosed}: hooks whose breaker this node last saw not closed (always left out).
     */
    synchronized Plan plan(Set<String> notClosed, int batch, long now) {
        judge(now);
        int inFlight = 0;
        int slowInFlight = 0;
        int slowHooks = 0;
        for (Lane lane : lanes.values()) {
            inFlight += lane.calls.size();
            if (!lane.fast) {
                slowInFlight += lane.calls.size();
                slowHooks += lane.calls.isEmpty() ? 0 : 1;
            }
        }
        int total = Math.min(batch, limits.maxInFlight() - inFlight - reservedTotal);
        if (total <= 0) {
            return Plan.NONE;
        }
        int slowRoom = Math.max(0, Math.min(total, limits.slowShare() - slowInFlight - reservedSlow));
        int scan = SCAN_FACTOR * total;
        boolean tight = slowRoom < scan;
        int fair = Math.clamp(limits.slowShare() / (slowHooks + 1), 1, limits.perHook());
        List<String> leftOut = new ArrayList<>(notClosed);
        List<String> hooks = new ArrayList<>();
        List<Integer> quotas = new ArrayList<>();
        List<Boolean> fast = new ArrayList<>();
        for (var e : lanes.entrySet()) {
            Lane lane = e.getValue();
            if (notClosed.contains(e.getKey()) || !lane.busy() && !(tight && lane.fast)) {
                continue;   // not listed: one call out of the slow share's room, like any hook not known here
            }
            int cap = lane.fast ? lane.limit : fair;
            int quota = Math.min(cap - lane.calls.size() - lane.reserved, lane.fast ? total : slowRoom);
            if (quota <= 0) {
                leftOut.add(e.getKey());
                continue;
            }
            hooks.add(e.getKey());
            quotas.add(quota);
            fast.add(lane.fast);
            lane.reserved += quota;
        }
        reservedTotal += total;
        reservedSlow += slowRoom;
        boolean[] fastArray = new boolean[fast.size()];
        for (int i = 0; i < fastArray.length; i++) {
            fastArray[i] = fast.get(i);
        }
        return new Plan(leftOut.toArray(String[]::new), hooks.toArray(String[]::new), quotas.stream().mapToInt(Integer::intValue).toArray(),
                fastArray, slowRoom, total, scan);
    }

    /** The plan of a probe pass: at most {@code most} probes, out of the slow share's room (a probed hook is failing). */
    synchronized Plan probes(int most, long now) {
        judge(now);
        int inFlight = 0;
        int slowInFlight = 0;
        for (Lane lane : lanes.values()) {
            inFlight += lane.calls.size();
            slowInFlight += lane.fast ? 0 : lane.calls.size();
        }
        int room = Math.min(most, Math.min(limits.maxInFlight() - inFlight - reservedTotal, limits.slowShare() - slowInFlight - reservedSlow));
        if (room <= 0) {
            return Plan.NONE;
        }
        reservedTotal += room;
        reservedSlow += room;
        return new Plan(new String[0], new String[0], new int[0], new boolean[0], room, room, 0);
    }

    /**
     * Ends {@code plan}'s reservation and starts a call for each hook of {@code claimed} (one entry
     * per delivery the claim took, in order); returns the calls, in the same order.
     */
    synchronized List<Call> settle(Plan plan, List<String> claimed, long now) {
        reservedTotal -= plan.total();
        reservedSlow -= plan.slowRoom();
        for (int i = 0; i < plan.hooks().length; i++) {
            Lane lane = lanes.get(plan.hooks()[i]);
            if (lane != null) {
                lane.reserved -= plan.quotas()[i];
            }
        }
        List<Call> calls = new ArrayList<>(claimed.size());
        for (String hook : claimed) {
            Lane lane = lanes.computeIfAbsent(hook, k -> new Lane());
            Call c = new Call(hook, now);
            lane.calls.add(c);
            lane.lastNanos = now;
            calls.add(c);
        }
        return calls;
    }

    /** {@code call} ended; {@code judged}: its hook is judged by how long it took (a call not made is not). */
    synchronized void finished(Call call, boolean judged, long now) {
        Lane lane = lanes.get(call.hookId);
        if (lane == null || !lane.calls.remove(call)) {
            return;
        }
        lane.lastNanos = now;
        if (!judged) {
            return;
        }
        if (now - call.startedNanos >= limits.slowCallNanos()) {
            lane.fast = false;
            lane.limit = 1;
        }
        else if (!lane.fast) {
            lane.fast = true;
            lane.limit = Math.min(2, limits.perHook());
        }
        else {
            lane.limit = Math.min(limits.perHook(), lane.limit + 1);
        }
    }

    /** Forgets hooks with nothing out here and idle for {@link #FORGET_AFTER_NANOS}; returns how many. */
    synchronized int forgetIdle(long now) {
        int before = lanes.size();
        lanes.values().removeIf(l -> !l.busy() && now - l.lastNanos >= FORGET_AFTER_NANOS);
        return before - lanes.size();
    }

    /** Calls out on this node: {@code calls} in all, {@code slowCalls} of them of hooks not judged fast. */
    record Load(int calls, int slowCalls) {
    }

    synchronized Load load(long now) {
        judge(now);
        int all = 0;
        int slow = 0;
        for (Lane lane : lanes.values()) {
            all += lane.calls.size();
            slow += lane.fast ? 0 : lane.calls.size();
        }
        return new Load(all, slow);
    }

    /** A hook's limit while it is judged fast; 0 while it is not. */
    synchronized int fastLimit(String hookId) {
        Lane lane = lanes.get(hookId);
        return lane == null || !lane.fast ? 0 : lane.limit;
    }
}
