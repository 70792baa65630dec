package dev.waterline.lifecycle;

import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.util.Set;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.RecoverableDataAccessException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.transaction.TransactionException;

/**
 * Tells a failure of the infrastructure (PostgreSQL or Redis unreachable, a connection lost, the
 * server shutting down, a lock or statement timeout) from everything else. The first kind says
 * nothing about the work that met it: the work is refused as {@code unavailable} and may be
 * retried. Anything else may be caused by one item of a batch, so batched writers isolate it
 * ({@link Isolation}) instead of failing the whole batch.
 */
public final class Failures {

    /** SQLSTATE classes of a failure that is not about the statement's data. */
    private static final Set<String> UNAVAILABLE_CLASSES = Set.of(
            "08",  // connection exception
            "40",  // transaction rollback: serialization failure, deadlock
            "53",  // insufficient resources: disk full, out of memory, too many connections
            "57",  // operator intervention: shutdown, query cancelled (statement timeout)
            "58"); // system error: I/O

    private Failures() {
    }

    public static boolean unavailable(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof DataAccessResourceFailureException || t instanceof TransientDataAccessException
                    || t instanceof RecoverableDataAccessException || t instanceof TransactionException
                    || t instanceof RedisConnectionFailureException
                    || t instanceof SQLTransientException || t instanceof SQLRecoverableException) {
                return true;
            }
            if (t instanceof SQLException s && s.getSQLState() != null && s.getSQLState().length() >= 2) {
                String state = s.getSQLState();
                if (UNAVAILABLE_CLASSES.contains(state.substring(0, 2)) || state.equals("55P03")) {
                    return true;
                }
            }
        }
        return false;
    }

    /** The failure's class and first message line, for a log line that needs no stack trace. */
    public static String describe(Throwable e) {
        String m = e.getMessage();
        if (m != null) {
            int nl = m.indexOf('\n');
            m = nl < 0 ? m : m.substring(0, nl);
        }
        return e.getClass().getSimpleName() + (m == null ? "" : ": " + m);
    }
}
