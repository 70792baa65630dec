package dev.waterline.config;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.waterline.support.WaterlineIntegrationTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * `accepted` is answered after the commit: that promise holds only if PostgreSQL's commit waits
 * for its WAL to reach disk. The embedded server must be configured so, and the server's own
 * connections must not inherit {@code synchronous_commit=off} from a database or role.
 */
@WaterlineIntegrationTest
class DurableCommitIntegrationTests {

    @Autowired
    JdbcTemplate jdbc;

    @Autowired
    HikariDataSource pool;

    @Test
    void theEmbeddedPostgresCommitsDurablyByDefault() {
        // reset_val is the configured default, not what this session's init statement made of it
        assertThat(jdbc.queryForObject("SELECT reset_val FROM pg_settings WHERE name = 'synchronous_commit'", String.class))
                .isEqualTo("on");
        assertThat(jdbc.queryForObject("SHOW fsync", String.class)).isEqualTo("on");
        assertThat(jdbc.queryForObject("SHOW synchronous_commit", String.class)).isEqualTo("on");
    }

    @Test
    void poolConnectionsCommitDurablyOnADatabaseThatDefaultsToAsynchronousCommit() throws Exception {
        jdbc.execute("DROP DATABASE IF EXISTS durability_off");
        jdbc.execute("CREATE DATABASE durability_off");
        jdbc.execute("ALTER DATABASE durability_off SET synchronous_commit = off");
        jdbc.execute("DROP DATABASE IF EXISTS durability_remote_apply");
        jdbc.execute("CREATE DATABASE durability_remote_apply");
        jdbc.execute("ALTER DATABASE durability_remote_apply SET synchronous_commit = remote_apply");
        try {
            assertThat(sessionSetting("durability_off")).as("off is raised").isEqualTo("on");
            assertThat(sessionSetting("durability_remote_apply")).as("a stronger level is kept").isEqualTo("remote_apply");
        }
        finally {
            jdbc.execute("DROP DATABASE IF EXISTS durability_off");
            jdbc.execute("DROP DATABASE IF EXISTS durability_remote_apply");
        }
    }

    /** synchronous_commit on a connection of a pool configured as the server's, to another database. */
    private String sessionSetting(String database) throws Exception {
        HikariConfig config = new HikariConfig();
        pool.copyStateTo(config);
        config.setPoolName("durability-check-" + database);
        config.setMinimumIdle(0);
        config.setMaximumPoolSize(1);
        config.setJdbcUrl(pool.getJdbcUrl().replaceFirst("/[^/?]+(\\?|$)", "/" + database + "$1"));
        try (HikariDataSource other = new HikariDataSource(config);
             Connection c = other.getConnection();
             Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SHOW synchronous_commit")) {
            rs.next();
            return rs.getString(1);
        }
    }
}
