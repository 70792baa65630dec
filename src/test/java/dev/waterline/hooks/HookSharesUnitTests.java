package dev.waterline.hooks;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fair shares' arithmetic (H6), with time driven by the test: limits, pools, users,
 * reservations. {@link #take} cuts a claim as {@code DeliveryQueueRepository.CLAIM} does.
 */
class HookSharesUnitTests {

    static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    /** The production defaults: 256 in flight, 8 per hook, half for the slow ones, half per user, 1 s a slow call. */
    static final HookShares.Limits DEFAULTS = new HookShares.Limits(256, 8, 128, 128, 1_000 * MS);

    HookShares shares = new HookShares(DEFAULTS);
    long now = 1_000_000 * MS;

    /**
     * The rows a claim under {@code plan} takes from a backlog of {@code backlog} due rows of each
     * of {@code hooks} (hook → the user who created it), cut as the claim statement cuts them: each
     * hook's rows in turn order (every hook's first before any hook's second) up to its quota (1 if
     * not listed, none if left out); numbered per user, up to the user's room; those of hooks not
     * listed as fast numbered again, up to the slow share's room (none looked at when it is 0); and
     * at most the total.
     */
    static List<HookShares.Taken> take(HookShares.Plan plan, Map<String, String> hooks, int backlog) {
        List<String> listed = Arrays.asList(plan.hooks());
        List<String> users = Arrays.asList(plan.users());
        Map<String, Integer> perUser = new HashMap<>();
        int slow = 0;
        List<HookShares.Taken> taken = new ArrayList<>();
        for (int turn = 1; turn <= backlog; turn++) {
            for (var h : hooks.entrySet()) {
                int i = listed.indexOf(h.getKey());
                boolean fast = i >= 0 && plan.fast()[i];
                int quota = i >= 0 ? plan.quotas()[i] : 1;
                if (Arrays.asList(plan.leftOut()).contains(h.getKey()) || !fast && plan.slowRoom() == 0 || turn > quota) {
                    continue;
                }
                int u = users.indexOf(h.getValue());
                int nth = perUser.merge(h.getValue(), 1, Integer::sum);
                if (nth > (u >= 0 ? plan.userRooms()[u] : plan.newUserRoom())) {
                    continue;
                }
                if (!fast && ++slow > plan.slowRoom()) {
                    continue;
                }
                if (taken.size() < plan.total()) {
                    taken.add(new HookShares.Taken(h.getKey(), h.getValue(), false));
                }
            }
        }
        return taken;
    }

    /** Plans a claim now, takes what it allows of a backlog of {@code n} rows of {@code hook} (its user {@code "u-" + hook}), and settles it: the calls started. */
    List<HookShares.Call> claim(String hook, int n) {
        return claim(Map.of(hook, "u-" + hook), n);
    }

    List<HookShares.Call> claim(Map<String, String> hooks, int n) {
        HookShares.Plan plan = shares.plan(Set.of(), 32, now);
        return shares.settle(plan, take(plan, hooks, n), now).stream().filter(Objects::nonNull).toList();
    }

    void finishAfter(List<HookShares.Call> calls, long millis) {
        now += millis * MS;
        calls.forEach(c -> shares.finished(c, true, now));
    }

    /** Brings {@code hook} to a fast limit of 8: four rounds of calls that end within 20 ms. */
    void earnTheLimit(String hook) {
        earnTheLimit(hook, "u-" + hook);
    }

    void earnTheLimit(String hook, String user) {
        for (int round = 0; round < 4; round++) {
            finishAfter(claim(Map.of(hook, user), 100), 20);
        }
        assertThat(shares.fastLimit(hook)).isEqualTo(8);
    }

    @Test
    void aHookNotSeenYetGetsOneCallAndEachFastCallRaisesItsLimitByOneUpToPerHookConcurrency() {
        List<HookShares.Call> first = claim("h", 5);
        assertThat(first).hasSize(1);
        assertThat(shares.fastLimit("h")).as("not judged while its first call is out").isZero();
        finishAfter(first, 20);
        List<Integer> limits = new ArrayList<>();
        for (int round = 0; round < 4; round++) {
            List<HookShares.Call> out = claim("h", 100);
            limits.add(out.size());
            finishAfter(out, 20);
        }
        assertThat(limits).containsExactly(2, 4, 8, 8);
        assertThat(shares.fastLimit("h")).isEqualTo(8);
    }

    @Test
    void aSlowCallSendsItsHookBackToTheSlowShare() {
        earnTheLimit("h");
        finishAfter(claim("h", 1), 1_500);
        assertThat(shares.fastLimit("h")).isZero();
        // judged slow: its calls come out of the slow share now
        claim("h", 100);
        assertThat(shares.load(now).slowCalls()).isEqualTo(shares.load(now).calls()).isPositive();
    }

    @Test
    void aCallStillOutPastSlowCallJudgesItsHookBeforeItEnds() {
        earnTheLimit("h");
        List<HookShares.Call> hanging = claim("h", 1);
        assertThat(shares.load(now).slowCalls()).isZero();
        now += 1_001 * MS;
        assertThat(shares.load(now).slowCalls()).isEqualTo(1);
        assertThat(shares.fastLimit("h")).isZero();
        finishAfter(hanging, 4_000);
        assertThat(shares.fastLimit("h")).isZero();
    }

    @Test
    void thirtyTwoSlowHooksHoldAtMostTheSlowShareAndAFastHookStillFindsRoom() {
        // the probe's shape: 32 hooks whose every call takes 9 s, claimed as fast as the plans allow
        for (int round = 0; round < 50; round++) {
            for (int h = 0; h < 32; h++) {
                claim("slow-" + h, 100);
            }
            now += 100 * MS;
        }
        HookShares.Load load = shares.load(now);
        assertThat(load.slowCalls()).isEqualTo(load.calls()).isLessThanOrEqualTo(DEFAULTS.slowShare());
        // each holds an equal part, counting one hook more: 128 / 33 = 3
        assertThat(load.calls()).isEqualTo(32 * 3);

        finishAfter(claim("fast", 1), 20);
        for (int round = 0; round < 3; round++) {
            finishAfter(claim("fast", 100), 20);
        }
        assertThat(shares.fastLimit("fast")).isEqualTo(8);
        assertThat(claim("fast", 100)).hasSize(8);
    }

    @Test
    void moreSlowHooksThanTheSlowShareGetOneCallEachUntilItIsFullAndFastHooksKeepTheRest() {
        earnTheLimit("fast");
        for (int h = 0; h < 300; h++) {
            claim("slow-" + h, 100);
        }
        assertThat(shares.load(now).slowCalls()).isEqualTo(DEFAULTS.slowShare());
        now += 5_000 * MS;   // the fast hook idle for a while: listed only because the slow share is full
        HookShares.Plan plan = shares.plan(Set.of(), 32, now);
        assertThat(plan.slowRoom()).isZero();
        assertThat(plan.claimable()).as("a fast hook may still be claimed").isTrue();
        assertThat(take(plan, Map.of("fast", "u-fast"), 100)).as("the fast hook's rows").hasSize(8);
        assertThat(take(plan, Map.of("slow-299", "u-slow-299"), 100)).as("a hook not known here waits for the slow share").isEmpty();
        shares.settle(plan, List.of(), now);
    }

    @Test
    void aFastHookIdleHereIsListedOnlyWhenItHadACallWithinSlowCallOrTheSlowShareIsNearlyFull() {
        for (int h = 0; h < 50; h++) {
            finishAfter(claim("fast-" + h, 1), 10);
        }
        HookShares.Plan recent = shares.plan(Set.of(), 32, now);
        assertThat(recent.hooks()).as("each had a call within slow-call").hasSize(50);
        shares.settle(recent, List.of(), now);
        now += 2_000 * MS;
        HookShares.Plan idle = shares.plan(Set.of(), 32, now);
        assertThat(idle.hooks()).as("idle for two seconds, the slow share empty: one call each if they have rows").isEmpty();
        assertThat(idle.users()).isEmpty();
        shares.settle(idle, List.of(), now);

        for (int h = 0; h < 128; h++) {
            claim("slow-" + h, 1);
        }
        HookShares.Plan tight = shares.plan(Set.of(), 32, now);
        assertThat(tight.slowRoom()).isZero();
        assertThat(tight.hooks()).as("the slow share full: every fast hook is listed with its own quota").hasSize(50);
        shares.settle(tight, List.of(), now);
    }

    @Test
    void claimsPlannedAtOnceNeverLetAHookNotListedPastItsCap() {
        // twenty loops plan before any settles (batch 8: the slow share has room for 16 of them);
        // each may take one row of a hook it does not list, as each claim's quota for it is 1
        List<HookShares.Plan> plans = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            plans.add(shares.plan(Set.of(), 8, now));
        }
        int offered = 0;
        int started = 0;
        for (HookShares.Plan p : plans) {
            List<HookShares.Taken> rows = take(p, Map.of("h", "u"), 100);
            offered += rows.size();
            started += (int) shares.settle(p, rows, now).stream().filter(Objects::nonNull).count();
        }
        assertThat(offered).as("rows the claims took").isEqualTo(16);
        assertThat(started).as("calls started; the rest are given back unmade").isEqualTo(DEFAULTS.perHook());
        assertThat(shares.load(now).calls()).isEqualTo(DEFAULTS.perHook());
    }

    @Test
    void hooksThatEarnTheirLimitAndThenHangHoldPartOfTheNodeAndAnotherFastHookKeepsRoom() {
        // 32 hooks of 32 users with a deep backlog, claimed as fast as the plans allow: their
        // first seven calls each end within 5 ms, every later one hangs
        Map<String, String> turning = new LinkedHashMap<>();
        for (int h = 0; h < 32; h++) {
            turning.put("turn-" + h, "user-" + h);
        }
        earnTheLimit("alice");
        Map<String, Integer> answered = new HashMap<>();
        List<HookShares.Call> out = new ArrayList<>();
        int most = 0;
        int aliceLeast = Integer.MAX_VALUE;
        for (int step = 0; step < 200; step++) {
            out.addAll(claim(turning, 100));
            now += 5 * MS;
            for (HookShares.Call c : List.copyOf(out)) {
                if (answered.merge(c.hookId, 1, Integer::sum) <= 7) {
                    shares.finished(c, true, now);
                    out.remove(c);
                }
            }
            most = Math.max(most, shares.load(now).calls());
            HookShares.Plan plan = shares.plan(Set.of(), 32, now);
            aliceLeast = Math.min(aliceLeast, take(plan, Map.of("alice", "u-alice"), 100).size());
            shares.settle(plan, List.of(), now);
        }
        // each an equal part of the fast share, counting one hook more: 128 / 33 = 3 (without it, 256)
        assertThat(most).as("calls out at once").isLessThanOrEqualTo(32 * (DEFAULTS.fastShare() / 33));
        assertThat(aliceLeast).as("rows another user's fast hook could take at the worst moment").isPositive();
    }

    @Test
    void oneUsersHooksHoldAtMostTheUserShareHoweverManyTheyAre() {
        // mallory's hooks in both pools: a hundred judged fast, and a hundred and twenty new ones;
        // from here on none of their calls ends, and four loops plan at once, again and again
        Map<String, String> mallorys = new LinkedHashMap<>();
        for (int h = 0; h < 100; h++) {
            mallorys.put("f-" + h, "mallory");
            earnTheLimit("f-" + h, "mallory");
        }
        for (int h = 0; h < 120; h++) {
            mallorys.put("s-" + h, "mallory");
        }
        for (int round = 0; round < 10; round++) {
            List<HookShares.Plan> plans = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                plans.add(shares.plan(Set.of(), 32, now));
            }
            for (HookShares.Plan p : plans) {
                shares.settle(p, take(p, mallorys, 100), now);
            }
            now += 10 * MS;
        }
        assertThat(shares.userCalls("mallory")).isEqualTo(DEFAULTS.perUser());
        earnTheLimit("other");
        // room, though its part of the fast share is smaller: it is split between hooks, and hers are many
        assertThat(claim("other", 100)).as("another user's fast hook").isNotEmpty();
    }

    @Test
    void twoPlansAtOnceNeverOfferTheSameRoomTwice() {
        earnTheLimit("fast");
        Map<String, String> fast = Map.of("fast", "u-fast");
        HookShares.Plan first = shares.plan(Set.of(), 32, now);
        HookShares.Plan second = shares.plan(Set.of(), 32, now);
        assertThat(take(first, fast, 100)).hasSize(8);
        assertThat(take(second, fast, 100)).as("the first plan holds the hook's whole quota").isEmpty();
        shares.settle(first, take(first, fast, 2), now);
        shares.settle(second, List.of(), now);
        HookShares.Plan third = shares.plan(Set.of(), 32, now);
        assertThat(take(third, fast, 100)).hasSize(6);
        shares.settle(third, List.of(), now);
    }

    @Test
    void theTotalNeverExceedsMaxInFlightAndAFullNodePlansNothing() {
        HookShares small = new HookShares(new HookShares.Limits(4, 8, 2, 4, 1_000 * MS));
        HookShares.Plan plan = small.plan(Set.of(), 32, now);
        assertThat(plan.total()).isEqualTo(4);
        assertThat(plan.slowRoom()).isEqualTo(2);
        small.settle(plan, List.of(new HookShares.Taken("a", "u", false), new HookShares.Taken("b", "u", false)), now);
        HookShares.Plan next = small.plan(Set.of(), 32, now);
        assertThat(next.total()).isEqualTo(2);
        assertThat(next.slowRoom()).isZero();
        assertThat(next.claimable()).as("only hooks not judged fast are known, and their share is full").isFalse();
        small.settle(next, List.of(), now);
    }

    @Test
    void aCallNotMadeSaysNothingAboutItsHook() {
        List<HookShares.Call> first = claim("h", 1);
        now += 5 * MS;
        shares.finished(first.getFirst(), false, now);
        assertThat(shares.fastLimit("h")).as("still not judged").isZero();
        assertThat(shares.load(now).calls()).isZero();
    }

    @Test
    void breakersKnownNotClosedAreLeftOut() {
        HookShares.Plan plan = shares.plan(Set.of("open"), 32, now);
        assertThat(plan.leftOut()).containsExactly("open");
        shares.settle(plan, List.of(), now);
    }

    @Test
    void idleHooksAreForgottenAndJudgedAgain() {
        for (int round = 0; round < 3; round++) {
            finishAfter(claim("fast", 100), 20);
        }
        assertThat(shares.forgetIdle(now)).isZero();
        now += HookShares.FORGET_AFTER_NANOS;
        assertThat(shares.forgetIdle(now)).isEqualTo(1);
        assertThat(shares.fastLimit("fast")).isZero();
    }

    @Test
    void probesComeOutOfTheSlowShareAndAreAlwaysMade() {
        for (int h = 0; h < 200; h++) {
            claim("slow-" + h, 100);
        }
        assertThat(shares.probes(8, now).total()).isZero();
        HookShares fresh = new HookShares(new HookShares.Limits(256, 8, 128, 1, 1_000 * MS));
        fresh.settle(fresh.plan(Set.of(), 32, now), List.of(new HookShares.Taken("h", "p-user", false)), now);
        HookShares.Plan probes = fresh.probes(8, now);
        assertThat(probes.total()).isEqualTo(8);
        assertThat(fresh.settle(probes, List.of(new HookShares.Taken("p", "p-user", true)), now))
                .as("its user at their share, the probe goes all the same").doesNotContainNull().hasSize(1);
        assertThat(fresh.load(now).slowCalls()).isEqualTo(2);
    }
}
