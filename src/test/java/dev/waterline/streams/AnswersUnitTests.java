package dev.waterline.streams;

import java.util.concurrent.CompletableFuture;

import dev.waterline.metrics.WaterlineMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** A wait that ends without an answer is answered unavailable, and counted; so is an upload's row left behind. */
class AnswersUnitTests {

    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    final StreamMetrics metrics = new StreamMetrics(new WaterlineMetrics(registry));
    final Answers answers = new Answers(20, metrics);

    double waits(String by) {
        return registry.get("waterline.streams.answer.waits.failed").tag("by", by).counter().count();
    }

    double drops() {
        return registry.get("waterline.streams.upload.drops.failed").counter().count();
    }

    @Test
    void theCountersShowZeroFromTheStart() {
        assertThat(waits("rest")).isZero();
        assertThat(waits("echo_bot")).isZero();
        assertThat(drops()).isZero();
    }

    @Test
    void anAnswerThatCameIsReturnedAndNothingCounted() {
        assertThat(answers.await(CompletableFuture.completedFuture("m-1"))).isEqualTo("m-1");
        assertThat(answers.awaitForBot(CompletableFuture.completedFuture("m-2"))).isEqualTo("m-2");
        assertThat(waits("rest") + waits("echo_bot")).isZero();
    }

    @Test
    void aRestWaitThatTimesOutOrFailsIsAnsweredUnavailableAndCountedEachTime() {
        Object late = answers.await(new CompletableFuture<>());
        assertThat(late).isInstanceOf(Refusal.class);
        assertThat(((Refusal) late).code()).isEqualTo("unavailable");

        for (int i = 0; i < 3; i++) {
            Object failed = answers.await(CompletableFuture.failedFuture(new IllegalStateException("broken reply")));
            assertThat(((Refusal) failed).code()).isEqualTo("unavailable");
        }
        assertThat(waits("rest")).as("every one counted, though the log is throttled").isEqualTo(4);
        assertThat(waits("echo_bot")).isZero();
    }

    @Test
    void anInterruptedRestWaitKeepsTheInterruptAndIsCounted() {
        Thread.currentThread().interrupt();
        try {
            Object answer = answers.await(new CompletableFuture<>());
            assertThat(((Refusal) answer).code()).isEqualTo("unavailable");
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        }
        finally {
            Thread.interrupted();
        }
        assertThat(waits("rest")).isEqualTo(1);
    }

    @Test
    void theBotsFailedWaitIsAnsweredUnavailableAndCounted() {
        Object failed = answers.awaitForBot(CompletableFuture.failedFuture(new IllegalStateException("broken")));
        assertThat(failed).isEqualTo(Refusal.unavailable("no answer in time"));
        assertThat(waits("echo_bot")).isEqualTo(1);
    }

    @Test
    void anUploadRowLeftBehindIsCounted() {
        answers.uploadNotDropped("b-1", new IllegalStateException("database gone"));
        answers.uploadNotDropped("b-2", new IllegalStateException("database gone"));
        assertThat(drops()).isEqualTo(2);
    }
}
