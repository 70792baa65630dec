package dev.waterline.lifecycle;

import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.waterline.metrics.WaterlineMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.springframework.jdbc.UncategorizedSQLException;
import org.springframework.transaction.CannotCreateTransactionException;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.RedisSystemException;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisLoadingException;
import io.lettuce.core.RedisReadOnlyException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

class LoopsUnitTests {

    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    final WaterlineMetrics metrics = new WaterlineMetrics(registry);
    final List<String> terminated = new CopyOnWriteArrayList<>();
    final Loops loops = new Loops(metrics, new FatalErrors((where, error) -> terminated.add(where + ": " + error)));

    double errors(String loop) {
        return registry.get("waterline.loop.errors").tag("loop", loop).counter().count();
    }

    @Test
    void aStepThatThrowsIsCountedAndTheLoopGoesOn() {
        AtomicInteger steps = new AtomicInteger();
        AtomicBoolean running = new AtomicBoolean(true);
        Thread t = loops.start("flaky", "flaky", running::get, () -> {
            if (steps.incrementAndGet() <= 3) {
                throw new IllegalStateException("boom " + steps.get());
            }
        });
        await().atMost(Duration.ofSeconds(10)).until(() -> steps.get() > 10);
        running.set(false);
        Workers.stop(t, Duration.ofSeconds(5));

        assertThat(errors("flaky")).isEqualTo(3);
        assertThat(terminated).isEmpty();
        assertThat(t.isAlive()).isFalse();
    }

    @Test
    void anErrorInAStepTakesTheProcessDownInsteadOfEndingTheLoopSilently() {
        Thread t = loops.start("doomed", "doomed", () -> true, () -> {
            throw new StackOverflowError("deep");
        });
        await().atMost(Duration.ofSeconds(10)).until(() -> !terminated.isEmpty());
        await().atMost(Duration.ofSeconds(10)).until(() -> !t.isAlive());
        assertThat(terminated).singleElement().asString().contains("loop doomed").contains("StackOverflowError");
    }

    @Test
    void aScheduledPassIsCountedOnFailureAndAnErrorInItIsFatal() {
        loops.pass("pass", () -> {
            throw new IllegalArgumentException("bad pass");
        });
        assertThat(errors("pass")).isEqualTo(1);
        assertThat(terminated).isEmpty();

        loops.pass("pass", () -> {
            throw new OutOfMemoryError("heap");
        });
        assertThat(terminated).singleElement().asString().contains("OutOfMemoryError");
    }

    @Test
    void aFailureOfTheInfrastructureIsToldFromOneCausedByAnItem() {
        List<Throwable> infrastructure = List.of(
                new CannotGetJdbcConnectionException("pool timeout"),
                new CannotCreateTransactionException("no connection"),
                new DataAccessResourceFailureException("io"),
                new UncategorizedSQLException("x", "sql", new SQLException("gone", "08006")),
                new UncategorizedSQLException("x", "sql", new SQLException("shutdown", "57P01")),
                new UncategorizedSQLException("x", "sql", new SQLException("read-only after a failover", "25006")),
                new RuntimeException(new SQLException("deadlock", "40P01")),
                new RedisSystemException("x", new RedisLoadingException("LOADING Redis is loading the dataset in memory")),
                new RedisSystemException("x", new RedisReadOnlyException("READONLY You can't write against a read only replica.")),
                new RedisSystemException("x", new RedisCommandExecutionException("OOM command not allowed")),
                new RedisSystemException("x", new RedisCommandTimeoutException("timed out")),
                new RedisSystemException("x", new RedisCommandExecutionException("MISCONF Redis is configured to save RDB snapshots")),
                new RedisConnectionFailureException("x", new io.lettuce.core.RedisConnectionException("Unable to connect",
                        new RedisCommandExecutionException("ERR max number of clients reached"))),
                new CannotGetJdbcConnectionException("x", new java.sql.SQLTransientConnectionException("pool", "28P01")),
                new UncategorizedSQLException("x", "sql", new SQLException("database does not exist", "3D000")));
        for (Throwable e : infrastructure) {
            assertThat(Failures.infrastructure(e)).as(e.toString()).isTrue();
            assertThat(Failures.causedByItem(e)).as(e.toString()).isFalse();
        }
        List<Throwable> items = List.of(
                new UncategorizedSQLException("x", "sql", new SQLException("invalid byte sequence: 0x00", "22021")),
                new DataIntegrityViolationException("dup", new SQLException("duplicate key", "23505")),
                // Spring files class 54 under DataAccessResourceFailureException: the SQLSTATE decides
                new DataAccessResourceFailureException("x", new SQLException("index row too big", "54000")),
                new UncategorizedSQLException("x", "sql", new SQLException("zero bytes in a parameter", "22021")),
                new RedisSystemException("x", new RedisCommandExecutionException("ERR value is not an integer")));
        for (Throwable e : items) {
            assertThat(Failures.causedByItem(e)).as(e.toString()).isTrue();
            assertThat(Failures.infrastructure(e)).as(e.toString()).isFalse();
        }
        for (Throwable bug : List.of(
                new UncategorizedSQLException("x", "sql", new SQLException("column does not exist", "42703")),
                new IllegalStateException("a bug of our own"),
                new NullPointerException())) {
            assertThat(Failures.causedByItem(bug)).as(bug + " is no item's doing").isFalse();
            assertThat(Failures.infrastructure(bug)).as(bug + " is no outage").isFalse();
        }
    }

    @Test
    void isolationCommitsEveryGoodItemInOrderAndPoisonsOnlyTheBadOnes() {
        List<Integer> items = new ArrayList<>();
        for (int i = 0; i < 37; i++) {
            items.add(i);
        }
        List<Integer> committed = new ArrayList<>();
        List<Integer> poisoned = new ArrayList<>();
        AtomicInteger commits = new AtomicInteger();
        int n = Isolation.commit(items, batch -> {
            commits.incrementAndGet();
            if (batch.contains(5) || batch.contains(30)) {
                throw new IllegalArgumentException("cannot store 5 or 30");
            }
            committed.addAll(batch);
        }, (item, e) -> poisoned.add(item));

        assertThat(n).isEqualTo(2);
        assertThat(poisoned).containsExactly(5, 30);
        List<Integer> expected = new ArrayList<>(items);
        expected.removeAll(List.of(5, 30));
        assertThat(committed).as("every other item, in the original order").containsExactlyElementsOf(expected);
        assertThat(commits.get()).as("fewer commits than items: a split, not one commit per item").isLessThan(items.size());
    }
}
