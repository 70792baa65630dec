package dev.waterline.hooks;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The fair shares' arithmetic (H6), with time driven by the test: limits, pools, reservations. */
class HookSharesUnitTests {

    static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    /** The production defaults: 256 in flight, 8 per hook, half for the slow ones, 1 s a slow call. */
    static final HookShares.Limits DEFAULTS = new HookShares.Limits(256, 8, 128, 1_000 * MS);

    HookShares shares = new HookShares(DEFAULTS);
    long now = 1_000_000 * MS;

    /** Claims {@code n} rows of {@code hook} within whatever plan is made now, as the database would (no more than the plan allows). */
    List<HookShares.Call> claim(String hook, int n) {
        HookShares.Plan plan = shares.plan(Set.of(), 32, now);
        int allowed = allowed(plan, hook);
        return shares.settle(plan, Collections.nCopies(Math.min(n, allowed), hook), now);
    }

    /** How many rows of {@code hook} a claim under {@code plan} could take. */
    static int allowed(HookShares.Plan plan, String hook) {
        if (Arrays.asList(plan.leftOut()).contains(hook)) {
            return 0;
        }
        int i = Arrays.asList(plan.hooks()).indexOf(hook);
        if (i >= 0) {
            return Math.min(plan.quotas()[i], plan.fast()[i] ? plan.total() : plan.slowRoom());
        }
        return Math.min(1, plan.slowRoom());
    }

    void finishAfter(List<HookShares.Call> calls, long millis) {
        now += millis * MS;
        calls.forEach(c -> shares.finished(c, true, now));
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
    void aSlowCallSendsItsHookBackToTheSlowShareWithItsLimitAtOne() {
        for (int round = 0; round < 4; round++) {
            finishAfter(claim("h", 100), 20);
        }
        assertThat(shares.fastLimit("h")).isEqualTo(8);
        finishAfter(claim("h", 1), 1_500);
        assertThat(shares.fastLimit("h")).isZero();
        // judged slow: its calls come out of the slow share now
        claim("h", 100);
        assertThat(shares.load(now).slowCalls()).isEqualTo(shares.load(now).calls()).isPositive();
    }

    @Test
    void aCallStillOutPastSlowCallJudgesItsHookBeforeItEnds() {
        for (int round = 0; round < 4; round++) {
            finishAfter(claim("h", 100), 20);
        }
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
        for (int round = 0; round < 3; round++) {
            finishAfter(claim("fast", 100), 20);
        }
        assertThat(shares.fastLimit("fast")).isEqualTo(8);
        for (int h = 0; h < 300; h++) {
            claim("slow-" + h, 100);
        }
        assertThat(shares.load(now).slowCalls()).isEqualTo(DEFAULTS.slowShare());
        HookShares.Plan plan = shares.plan(Set.of(), 32, now);
        assertThat(plan.slowRoom()).isZero();
        assertThat(plan.claimable()).as("a fast hook may still be claimed").isTrue();
        assertThat(allowed(plan, "fast")).isEqualTo(8);
        assertThat(allowed(plan, "slow-299")).as("a hook not known here waits for the slow share").isZero();
        shares.settle(plan, List.of(), now);
    }

    @Test
    void twoPlansAtOnceNeverOfferTheSameRoomTwice() {
        for (int round = 0; round < 3; round++) {
            finishAfter(claim("fast", 100), 20);
        }
        HookShares.Plan first = shares.plan(Set.of(), 32, now);
        HookShares.Plan second = shares.plan(Set.of(), 32, now);
        assertThat(allowed(first, "fast")).isEqualTo(8);
        assertThat(allowed(second, "fast")).as("the first plan holds the hook's whole quota").isZero();
        shares.settle(first, List.of("fast", "fast"), now);
        shares.settle(second, List.of(), now);
        HookShares.Plan third = shares.plan(Set.of(), 32, now);
        assertThat(allowed(third, "fast")).isEqualTo(6);
        shares.settle(third, List.of(), now);
    }

    @Test
    void theTotalNeverExceedsMaxInFlightAndAFullNodePlansNothing() {
        HookShares small = new HookShares(new HookShares.Limits(4, 8, 2, 1_000 * MS));
        HookShares.Plan plan = small.plan(Set.of(), 32, now);
        assertThat(plan.total()).isEqualTo(4);
        assertThat(plan.slowRoom()).isEqualTo(2);
        small.settle(plan, List.of("a", "b"), now);
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
    void probesComeOutOfTheSlowShare() {
        for (int h = 0; h < 200; h++) {
            claim("slow-" + h, 100);
        }
        assertThat(shares.probes(8, now).total()).isZero();
        HookShares fresh = new HookShares(DEFAULTS);
        HookShares.Plan probes = fresh.probes(8, now);
        assertThat(probes.total()).isEqualTo(8);
        assertThat(fresh.settle(probes, List.of("p"), now)).hasSize(1);
        assertThat(fresh.load(now).slowCalls()).isEqualTo(1);
    }
}
