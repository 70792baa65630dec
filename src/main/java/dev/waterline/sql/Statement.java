package dev.waterline.sql;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

import org.springframework.jdbc.core.RowCallbackHandler;

/**
 * One statement for {@link Statements#run}: its text, its bind values in order, and the handler of
 * the rows it returns ({@code null} for a statement that returns none: an INSERT without
 * RETURNING). A statement with RETURNING always returns a row set, perhaps empty, so it needs a
 * handler even when it may match nothing.
 */
public record Statement(String sql, List<Object> binds, RowCallbackHandler rows) {

    public Statement {
        binds = Collections.unmodifiableList(new ArrayList<>(binds));
    }

    public static Statement of(String sql, RowCallbackHandler rows, Object... binds) {
        return new Statement(sql, Arrays.asList(binds), rows);
    }
}
