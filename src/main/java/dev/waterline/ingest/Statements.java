package dev.waterline.ingest;

import java.util.List;

import org.springframework.dao.DataRetrievalFailureException;
import org.springframework.jdbc.core.ArgumentPreparedStatementSetter;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.PreparedStatementCallback;
import org.springframework.jdbc.core.RowCallbackHandler;

/**
 * Runs several statements in one round trip: a text of statements separated by {@code ;}, with
 * the parameters of all of them in order. PostgreSQL's driver sends them as separate statements
 * (each planned and executed on its own, in order, in the caller's transaction) and reads every
 * answer after one wait. Each statement that returns rows hands them to the next handler, in
 * order; statements that return only a count (an INSERT without RETURNING) are skipped.
 */
final class Statements {

    private Statements() {
    }

    static void run(JdbcTemplate jdbc, String sql, List<RowCallbackHandler> rowSets, Object... params) {
        jdbc.execute(sql, (PreparedStatementCallback<Void>) ps -> {
            new ArgumentPreparedStatementSetter(params).setValues(ps);
            int next = 0;
            boolean rows = ps.execute();
            while (true) {
                if (rows) {
                    if (next == rowSets.size()) {
                        throw new DataRetrievalFailureException("more row sets than handlers: " + sql);
                    }
                    RowCallbackHandler handler = rowSets.get(next++);
                    try (var rs = ps.getResultSet()) {
                        while (rs.next()) {
                            handler.processRow(rs);
                        }
                    }
                }
                else if (ps.getUpdateCount() == -1) {
                    break;
                }
                rows = ps.getMoreResults();
            }
            if (next != rowSets.size()) {
                throw new DataRetrievalFailureException(next + " row sets for " + rowSets.size() + " handlers: " + sql);
            }
            return null;
        });
    }
}
