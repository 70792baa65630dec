package dev.waterline.typing;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import dev.waterline.support.RecordingSession;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class TypingGateUnitTests {

    static final long SECOND = Duration.ofSeconds(1).toNanos();

    final AtomicLong now = new AtomicLong(1_000 * SECOND);
    double pressure = 0;
    final TypingGate gate = new TypingGate(Duration.ofSeconds(1), 0.5, () -> pressure, now::get);
    final RecordingSession alice = new RecordingSession("alice");

    @Test
    void aBurstInsideTheIntervalIsCoalescedIntoItsFirstFrame() {
        assertThat(gate.admit(alice, "c1")).isEqualTo(TypingGate.Verdict.ADMITTED);
        now.addAndGet(SECOND / 10);
        assertThat(gate.admit(alice, "c1")).isEqualTo(TypingGate.Verdict.COALESCED);
        now.addAndGet(SECOND - SECOND / 10 - 1);
        assertThat(gate.admit(alice, "c1")).isEqualTo(TypingGate.Verdict.COALESCED);
        now.addAndGet(1);
        assertThat(gate.admit(alice, "c1")).as("an interval after the first").isEqualTo(TypingGate.Verdict.ADMITTED);
    }

    @Test
    void eachUserAndChatIsCoalescedApart() {
        assertThat(gate.admit(alice, "c1")).isEqualTo(TypingGate.Verdict.ADMITTED);
        assertThat(gate.admit(alice, "c2")).isEqualTo(TypingGate.Verdict.ADMITTED);
        assertThat(gate.admit(new RecordingSession("bob"), "c1")).isEqualTo(TypingGate.Verdict.ADMITTED);
    }

    @Test
    void typingIsShedWhileTheGroupCommitIsBehind() {
        pressure = 0.5;
        assertThat(gate.admit(alice, "c1")).isEqualTo(TypingGate.Verdict.PRESSURE);
        pressure = 0.49;
        assertThat(gate.admit(alice, "c1")).as("the shed frame was the burst's first").isEqualTo(TypingGate.Verdict.COALESCED);
        now.addAndGet(SECOND);
        assertThat(gate.admit(alice, "c1")).isEqualTo(TypingGate.Verdict.ADMITTED);
    }

    @Test
    void aFrameOverTheConnectionsRateIsDropped() {
        RecordingSession spent = new RecordingSession("carol") {
            @Override
            public boolean admitRate() {
                return false;
            }
        };
        assertThat(gate.admit(spent, "c1")).isEqualTo(TypingGate.Verdict.RATE);
        assertThat(gate.remembered()).as("a frame over the rate cost nothing and is not remembered").isZero();
    }

    @Test
    void aForgottenChatIsJudgedAfreshAtOnce() {
        assertThat(gate.admit(alice, "c1")).isEqualTo(TypingGate.Verdict.ADMITTED);
        gate.forget(alice, "c1");
        assertThat(gate.admit(alice, "c1")).isEqualTo(TypingGate.Verdict.ADMITTED);
    }

    @Test
    void pruningForgetsTypistsAnIntervalOld() {
        gate.admit(alice, "c1");
        now.addAndGet(SECOND / 2);
        gate.admit(alice, "c2");
        now.addAndGet(SECOND / 2);
        gate.prune();
        assertThat(gate.remembered()).as("c1 is an interval old, c2 half").isEqualTo(1);
        now.addAndGet(SECOND / 2);
        gate.prune();
        assertThat(gate.remembered()).isZero();
    }
}
