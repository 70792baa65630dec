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
 * how many more deliveries each hook, and each user's hooks together, may have claimed here. A
 * claim takes no more of a hook than it may call at once, so nothing claimed ever waits for a
 * permit, and one user's slow targets are held to their own share.
 *
 * <p>The rule. A hook is <em>fast</em> once a call of it ended within {@code slow-call}: its limit
 * then starts at 2 and grows by one with each fast call (so it doubles with each round of calls, as
 * TCP's slow start does), up to {@code per-hook-concurrency}. A call that takes longer, or is still
 * out past {@code slow-call}, makes it slow again (its limit starts from 2 the next time it is
 * judged fast). Two pools share {@code max-in-flight}, each split equally among the hooks using it:
 * <ul>
 * <li>hooks judged slow and hooks not judged yet (new here, or idle long enough to be forgotten)
 * share the <em>slow share</em>, {@code slow-share} × {@code max-in-flight} calls: each with calls
 * out may hold {@code slow share / (such hooks + 1)}, at least 1 and at most
 * {@code per-hook-concurrency};</li>
 * <li>fast hooks share the rest, the <em>fast share</em>: each may hold the smaller of its limit and
 * {@code fast share / (fast hooks with calls out + 1)} (at least 1), so hooks that earn their limit
 * and then hang hold their parts of the fast share (reckoned at each plan: hooks that start while
 * few others are busy may hold more for a while). The slow share never takes the fast share's
 * room, but calls that turn slow while out stay out until they end.</li>
 * </ul>
 * Counting one hook more than there are leaves room for one that comes. Over both pools, the hooks
 * one user created hold at most {@code user-share} × {@code max-in-flight} calls (a breaker's probe
 * apart): however many hooks a user makes, and however they time their answers, the rest of the
 * node is other users'.
 *
 * <p>What a claim is told ({@link Plan}): the hooks it leaves out (no room), each listed hook's
 * quota and pool, each listed user's room, and for hooks not listed one call each out of the slow
 * share's room (a user not listed: {@link Plan#newUserRoom}). A hook is listed while it has calls
 * out or room reserved by another plan; a fast hook idle here is listed too when it had a call
 * within {@code slow-call} (a backlog draining between two calls: without its quota it would get
 * one call a claim), and every fast hook known here is while the slow share's room is smaller than
 * the claim (a hook not listed is taken out of that room, which would then not serve it). So in
 * the usual case the lists hold the hooks and users with calls out or a call in the last
 * {@code slow-call}; only while the slow share is nearly full do they hold every fast hook seen
 * here in the last ten minutes.
 *
 * <p>Concurrency. Several claim loops plan at once: a plan reserves what it offers (per listed
 * hook, and of both pools) until {@link #settle} replaces the reservation with the calls the claim
 * took. A hook or user not listed has nothing reserved, so claims planned at once may each take of
 * it; {@code settle} then starts a call only while the hook stays within its cap and the user
 * within theirs, and answers the rest to be given back unmade (rare: a hook idle until several
 * loops found its rows at once). Pure: time is passed in (nanoseconds), nothing here does I/O; one
 * lock guards it all.
 */
final class HookShares {

    /** Known hooks idle this long are forgotten (judged again on their next call). */
    static final long FORGET_AFTER_NANOS = TimeUnit.MINUTES.toNanos(10);
    /** A claim looks at this many due rows for each one it may take (the rest are other hooks' or over a quota). */
    static final int SCAN_FACTOR = 4;

    /** The limits, from {@link HookProperties}: calls in all, per hook, in the slow share, per user. */
    record Limits(int maxInFlight, int perHook, int slowShare, int perUser, long slowCallNanos) {

        static Limits of(HookProperties p) {
            return new Limits(p.maxInFlight(), p.perHookConcurrency(), share(p.maxInFlight(), p.slowShare()),
                    share(p.maxInFlight(), p.userShare()), p.slowCall().toNanos());
        }

        private static int share(int of, double part) {
            return Math.max(1, (int) Math.floor(of * part));
        }

        /** What the slow share leaves the fast hooks (0 when the slow share is all of it). */
        int fastShare() {
            return Math.max(0, maxInFlight - slowShare);
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

    /** A row a claim took: its hook, the user who created the hook, and whether it is a breaker's probe. */
    record Taken(String hookId, String userId, boolean probe) {
    }

    /**
     * What one claim may take: {@code total} rows in all, of which at most {@code slowRoom} of
     * hooks not judged fast; none of {@code leftOut}; of each of {@code hooks} at most its
     * {@code quotas} entry ({@code fast}: counted against the total only); of any other hook one;
     * of the hooks of each of {@code users} together at most its {@code userRooms} entry, and of
     * any other user's at most {@code newUserRoom}. {@code scan}: due rows the claim looks at.
     */
    record Plan(String[] leftOut, Quotas listed, Rooms owners, int slowRoom, int total, int scan) {

        /** The hooks a plan lists, each with its quota and whether it is judged fast (pairwise arrays, bound as they are). */
        record Quotas(String[] hooks, int[] quotas, boolean[] fast) {

            static final Quotas NONE = new Quotas(new String[0], new int[0], new boolean[0]);
        }

        /** The users a plan lists, each with its room; {@code newcomer}: the room of a user not listed. */
        record Rooms(String[] users, int[] rooms, int newcomer) {

            static final Rooms NONE = new Rooms(new String[0], new int[0], 0);
        }

        static final Plan NONE = new Plan(new String[0], Quotas.NONE, Rooms.NONE, 0, 0, 0);

        String[] hooks() {
            return listed.hooks();
        }

        int[] quotas() {
            return listed.quotas();
        }

        boolean[] fast() {
            return listed.fast();
        }

        String[] users() {
            return owners.users();
        }

        int[] userRooms() {
            return owners.rooms();
        }

        int newUserRoom() {
            return owners.newcomer();
        }

        /** Whether a claim could take anything: room, and some hook it may take from. */
        boolean claimable() {
            if (total <= 0) {
                return false;
            }
            if (slowRoom > 0) {
                return true;
            }
            for (boolean f : fast()) {
                if (f) {
                    return true;
                }
            }
            return false;
        }
    }

    private static final class Lane {
        final String userId;
        final Set<Call> calls = new HashSet<>();
        int reserved;
        int limit = 1;
        boolean fast;
        long lastNanos;

        Lane(String userId) {
            this.userId = userId;
        }

        boolean busy() {
            return !calls.isEmpty() || reserved > 0;
        }
    }

    /** Calls out (and reserved) on this node as the plan counts them. */
    private static final class Tally {
        int inFlight;
        int slowInFlight;
        int slowHooks;
        int fastHooks;
        /** Per user: calls out and room reserved. */
        final Map<String, Integer> used = new HashMap<>();
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
                        break;
                    }
                }
            }
        }
    }

    private Tally tally() {
        Tally t = new Tally();
        for (Lane lane : lanes.values()) {
            int out = lane.calls.size();
            t.inFlight += out;
            if (lane.fast) {
                t.fastHooks += out == 0 ? 0 : 1;
            }
            else {
                t.slowInFlight += out;
                t.slowHooks += out == 0 ? 0 : 1;
            }
            if (lane.busy()) {
                t.used.merge(lane.userId, out + lane.reserved, Integer::sum);
            }
        }
        return t;
    }

    /** The most calls {@code lane}'s hook may have out now: its limit and the fast share's part, or the slow share's part. */
    private int cap(Lane lane, Tally t) {
        if (lane.fast) {
            return Math.min(lane.limit, Math.clamp(limits.fastShare() / (t.fastHooks + 1), 1, limits.perHook()));
        }
        return Math.clamp(limits.slowShare() / (t.slowHooks + 1), 1, limits.perHook());
    }

    /**
     * The plan of a claim of at most {@code batch} rows, its room reserved until {@link #settle};
     * {@code notClosed}: hooks whose breaker this node last saw not closed (always left out).
     */
    synchronized Plan plan(Set<String> notClosed, int batch, long now) {
        judge(now);
        Tally t = tally();
        int total = Math.min(batch, limits.maxInFlight() - t.inFlight - reservedTotal);
        if (total <= 0) {
            return Plan.NONE;
        }
        int slowRoom = Math.clamp(limits.slowShare() - t.slowInFlight - reservedSlow, 0, total);
        // a hook not listed gets one row a claim, out of the slow share's room: a fast hook idle
        // here is listed (with its own quota) when it had a call within slow-call (a backlog
        // draining: its next rows are due at once), and every one is while that room is smaller
        // than the claim (it would not be served out of it)
        boolean tight = slowRoom < total;
        List<String> leftOut = new ArrayList<>(notClosed);
        List<String> hooks = new ArrayList<>();
        List<Integer> quotas = new ArrayList<>();
        List<Boolean> fast = new ArrayList<>();
        Map<String, Integer> userLeft = new HashMap<>();
        for (var e : lanes.entrySet()) {
            Lane lane = e.getValue();
            if (notClosed.contains(e.getKey()) || !lane.busy() && !(lane.fast && (tight || now - lane.lastNanos < limits.slowCallNanos()))) {
                continue;   // not listed: one call out of the slow share's room, like any hook not known here
            }
            int left = userLeft.computeIfAbsent(lane.userId, u -> limits.perUser() - t.used.getOrDefault(u, 0));
            int quota = Math.min(Math.min(cap(lane, t) - lane.calls.size() - lane.reserved, lane.fast ? total : slowRoom), left);
            if (quota <= 0) {
                leftOut.add(e.getKey());
                continue;
            }
            hooks.add(e.getKey());
            quotas.add(quota);
            fast.add(lane.fast);
            lane.reserved += quota;
            userLeft.put(lane.userId, left - quota);
        }
        // every user with calls out or room reserved, and the users of listed hooks: their room
        // before this plan's own reservations (which fit in it), for the claim to cut at
        Set<String> listedUsers = new HashSet<>(t.used.keySet());
        listedUsers.addAll(userLeft.keySet());
        String[] users = listedUsers.toArray(String[]::new);
        int[] rooms = new int[users.length];
        for (int i = 0; i < users.length; i++) {
            rooms[i] = Math.max(0, limits.perUser() - t.used.getOrDefault(users[i], 0));
        }
        reservedTotal += total;
        reservedSlow += slowRoom;
        boolean[] fastArray = new boolean[fast.size()];
        for (int i = 0; i < fastArray.length; i++) {
            fastArray[i] = fast.get(i);
        }
        return new Plan(leftOut.toArray(String[]::new),
                new Plan.Quotas(hooks.toArray(String[]::new), quotas.stream().mapToInt(Integer::intValue).toArray(), fastArray),
                new Plan.Rooms(users, rooms, Math.min(limits.perUser(), total)), slowRoom, total, SCAN_FACTOR * total);
    }

    /** The plan of a probe pass: at most {@code most} probes, out of the slow share's room (a probed hook is failing). */
    synchronized Plan probes(int most, long now) {
        judge(now);
        Tally t = tally();
        int room = Math.min(most, Math.min(limits.maxInFlight() - t.inFlight - reservedTotal, limits.slowShare() - t.slowInFlight - reservedSlow));
        if (room <= 0) {
            return Plan.NONE;
        }
        reservedTotal += room;
        reservedSlow += room;
        return new Plan(new String[0], Plan.Quotas.NONE, Plan.Rooms.NONE, room, room, 0);
    }

    /**
     * Ends {@code plan}'s reservation and starts a call for each row of {@code taken} (in order);
     * returns the calls, in the same order, with {@code null} for a row to give back unmade: one of
     * a hook not listed that claims planned at once took past its cap, or of a user past theirs
     * (a breaker's probe is always made).
     */
    synchronized List<Call> settle(Plan plan, List<Taken> taken, long now) {
        reservedTotal -= plan.total();
        reservedSlow -= plan.slowRoom();
        Set<String> listed = new HashSet<>();
        for (int i = 0; i < plan.hooks().length; i++) {
            listed.add(plan.hooks()[i]);
            Lane lane = lanes.get(plan.hooks()[i]);
            if (lane != null) {
                lane.reserved -= plan.quotas()[i];
            }
        }
        Tally t = taken.isEmpty() ? null : tally();
        List<Call> calls = new ArrayList<>(taken.size());
        for (Taken row : taken) {
            Lane lane = lanes.computeIfAbsent(row.hookId(), k -> new Lane(row.userId()));
            int used = t.used.getOrDefault(lane.userId, 0);
            if (!row.probe() && (used >= limits.perUser()
                    || !listed.contains(row.hookId()) && lane.calls.size() + lane.reserved >= cap(lane, t))) {
                calls.add(null);
                continue;
            }
            Call c = new Call(row.hookId(), now);
            lane.calls.add(c);
            lane.lastNanos = now;
            t.used.put(lane.userId, used + 1);
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
        Tally t = tally();
        return new Load(t.inFlight, t.slowInFlight);
    }

    /** A hook's limit while it is judged fast; 0 while it is not. */
    synchronized int fastLimit(String hookId) {
        Lane lane = lanes.get(hookId);
        return lane == null || !lane.fast ? 0 : lane.limit;
    }

    /** Calls out of the hooks {@code userId} created. */
    synchronized int userCalls(String userId) {
        int n = 0;
        for (Lane lane : lanes.values()) {
            n += lane.userId.equals(userId) ? lane.calls.size() : 0;
        }
        return n;
    }
}
