package dev.waterline.sql;

import java.util.ArrayList;
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
public final class Statements {

    private Statements() {
    }

    /**
     * Runs {@code statements} in one round trip, in order, in the caller's transaction (if any):
     * each one's text joined by {@code ;}, their binds in order, and each row set handed to its
     * statement's handler.
     */
    public static void run(JdbcTemplate jdbc, List<Statement> statements) {
        StringBuilder sql = new StringBuilder();
        List<Object> binds = new ArrayList<>();
        List<RowCallbackHandler> rowSets = new ArrayList<>();
        for (Statement s : statements) {
            if (!sql.isEmpty()) {
                sql.append(";\n");
            }
            sql.append(s.sql().strip());
            binds.addAll(s.binds());
            if (s.rows() != null) {
                rowSets.add(s.rows());
            }
        }
        run(jdbc, sql.toString(), rowSets, binds.toArray());
    }

    public static void run(JdbcTemplate jdbc, String sql, List<RowCallbackHandler> rowSets, Object... params) {
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
