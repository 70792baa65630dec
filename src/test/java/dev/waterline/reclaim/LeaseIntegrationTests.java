package dev.waterline.reclaim;

import java.time.Duration;
import java.util.Optional;

import dev.waterline.presence.ClusterProperties;
import dev.waterline.support.WaterlineIntegrationTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The reclaim lease in PostgreSQL (V5): one node leads at a time; a lease that ran out is taken by
 * another with a new epoch; and a leader that lost its lease (it stalled past it) writes nothing
 * in its fenced transactions, so two leaders can never both delete. Runs on the shared context's
 * database, whose single node leads without this row (LocalLeadership).
 */
@WaterlineIntegrationTest
class LeaseIntegrationTests {

    @Autowired
    JdbcTemplate jdbc;

    @Autowired
    TransactionTemplate tx;

    PostgresLease lease(String node) {
        return new PostgresLease(jdbc, tx, new ClusterProperties(true, node, Duration.ofSeconds(10), Duration.ofSeconds(1),
                Duration.ofSeconds(1), 8000));
    }

    @AfterEach
    void free() {
        jdbc.update("UPDATE reclaim_marker SET leader = NULL, lease_until = '-infinity'");
    }

    @Test
    void oneNodeLeadsAtATimeAndALeaseThatRanOutIsTakenWithANewEpoch() {
        PostgresLease a = lease("lease-a");
        PostgresLease b = lease("lease-b");
        long first = a.lead();
        assertThat(first).isPositive();
        assertThat(b.lead()).as("a's lease still runs").isEqualTo(-1);
        assertThat(a.lead()).as("a renews under the same epoch").isEqualTo(first);

        jdbc.update("UPDATE reclaim_marker SET lease_until = now() - interval '1 second'");
        long second = b.lead();
        assertThat(second).isEqualTo(first + 1);
        assertThat(a.lead()).isEqualTo(-1);
    }

    @Test
    void aLeaderThatLostItsLeaseWritesNothingInItsFencedTransactions() {
        PostgresLease a = lease("fence-a");
        PostgresLease b = lease("fence-b");
        long stale = a.lead();
        jdbc.update("UPDATE reclaim_marker SET lease_until = now() - interval '1 second'");
        long current = b.lead();

        Optional<Integer> byA = a.fenced(stale, () -> jdbc.update("UPDATE reclaim_marker SET updated_at = '2000-01-01'"));
        assertThat(byA).as("a stalled past its lease: its epoch is gone").isEmpty();
        assertThat(jdbc.queryForObject("SELECT updated_at < '2001-01-01' FROM reclaim_marker", Boolean.class)).isFalse();

        Optional<Integer> byB = b.fenced(current, () -> jdbc.update("UPDATE reclaim_marker SET updated_at = now()"));
        assertThat(byB).contains(1);
        assertThat(a.fenced(current, () -> 1)).as("nor may a use b's epoch").isEmpty();
    }

    @Test
    void aLeaderThatResignsLetsAnotherTakeOverAtOnce() {
        PostgresLease a = lease("resign-a");
        PostgresLease b = lease("resign-b");
        long first = a.lead();
        a.resign();
        assertThat(b.lead()).isEqualTo(first + 1);
    }
}
