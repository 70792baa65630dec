package dev.waterline.lifecycle;

import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.util.Set;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.RecoverableDataAccessException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.transaction.TransactionException;

/**
 * Tells three kinds of failure apart, for the batched writers and the REST error answers.
 *
 * <ul>
 * <li><b>Caused by an item</b> ({@link #causedByItem}): the storage refused one item's data. An
 * SQLSTATE of class 22 (data exception: a byte the encoding refuses, a value out of range), 23
 * (integrity constraint violation) or 54 (program limit exceeded: a value too large to index),
 * or a Redis command error other than those Redis answers while it cannot serve. Only these are
 * isolated to their item ({@link Isolation}).</li>
 * <li><b>Infrastructure</b> ({@link #infrastructure}): PostgreSQL or Redis cannot serve right
 * now. SQLSTATE classes 08, 28 (authentication: a rotated password), 3D (the database is gone),
 * 40, 53, 57, 58 and the states 25006 (read-only transaction: a
 * standby after a failover, a database gone read-only on a full disk), 25P03 and 55P03; Redis
 * answering LOADING, READONLY, BUSY, OOM, MASTERDOWN, TRYAGAIN, CLUSTERDOWN, NOREPLICAS,
 * NOSCRIPT, MISCONF (a failed save), NOAUTH, NOPERM or WRONGPASS; a connection or a command
 * that timed out. The work is refused {@code unavailable} (503), whole, and may be retried.</li>
 * <li><b>Anything else</b> is a bug (a broken query, class 42 or XX; an exception of our own):
 * neither one item's doing nor an outage. A batch meeting it is refused {@code unavailable}
 * whole, no item blamed; a REST request is answered 500. Both are logged with their stack trace
 * and counted.</li>
 * </ul>
 *
 * <p>Order: an item's SQLSTATE (22, 23, 54) anywhere in the cause chain decides first (Spring
 * files class 54 under {@code DataAccessResourceFailureException}); then any connection-level
 * failure in the chain (whatever it carries inside); then the first SQLSTATE or Redis error.
 */
public final class Failures {

    private static final Set<String> ITEM_CLASSES = Set.of("22", "23", "54");
    private static final Set<String> INFRASTRUCTURE_CLASSES = Set.of("08", "28", "3D", "40", "53", "57", "58");
    private static final Set<String> INFRASTRUCTURE_STATES = Set.of("25006", "25P03", "55P03");
    private static final Set<String> REDIS_UNAVAILABLE = Set.of("LOADING", "READONLY", "BUSY", "OOM", "MASTERDOWN",
            "TRYAGAIN", "CLUSTERDOWN", "NOREPLICAS", "NOSCRIPT", "MISCONF", "NOAUTH", "NOPERM", "WRONGPASS");

    private enum Kind { ITEM, INFRASTRUCTURE, OTHER }

    private Failures() {
    }

    /** Whether {@code e} was caused by one item of the work that met it (see the class note). */
    public static boolean causedByItem(Throwable e) {
        return kind(e) == Kind.ITEM;
    }

    /** Whether {@code e} says PostgreSQL or Redis cannot serve right now (see the class note). */
    public static boolean infrastructure(Throwable e) {
        return kind(e) == Kind.INFRASTRUCTURE;
    }

    private static Kind kind(Throwable e) {
        // 1. An item's data error decides even under a connection-level wrapper (Spring files
        //    class 54 under DataAccessResourceFailureException).
        for (Throwable t = e; t != null; t = next(t)) {
            if (t instanceof SQLException s && s.getSQLState() != null && s.getSQLState().length() >= 2
                    && ITEM_CLASSES.contains(s.getSQLState().substring(0, 2))) {
                return Kind.ITEM;
            }
        }
        // 2. A failure to reach or use the server, whatever it carries inside (a Redis "ERR max
        //    number of clients" inside a connection failure is no item's doing).
        for (Throwable t = e; t != null; t = next(t)) {
            if (t instanceof DataAccessResourceFailureException || t instanceof TransientDataAccessException
                    || t instanceof RecoverableDataAccessException || t instanceof TransactionException
                    || t instanceof RedisConnectionFailureException || t instanceof RedisConnectionException
                    || t instanceof RedisCommandTimeoutException
                    || t instanceof SQLTransientException || t instanceof SQLRecoverableException) {
                return Kind.INFRASTRUCTURE;
            }
        }
        // 3. The first SQLSTATE or Redis error decides.
        for (Throwable t = e; t != null; t = next(t)) {
            if (t instanceof SQLException s && s.getSQLState() != null && s.getSQLState().length() >= 2) {
                String state = s.getSQLState();
                return INFRASTRUCTURE_CLASSES.contains(state.substring(0, 2)) || INFRASTRUCTURE_STATES.contains(state)
                        ? Kind.INFRASTRUCTURE : Kind.OTHER;
            }
            if (t instanceof RedisCommandExecutionException r) {
                return REDIS_UNAVAILABLE.contains(firstWord(r.getMessage())) ? Kind.INFRASTRUCTURE : Kind.ITEM;
            }
            if (t instanceof RedisException) {
                return Kind.INFRASTRUCTURE;
            }
        }
        return Kind.OTHER;
    }

    private static Throwable next(Throwable t) {
        return t.getCause() == t ? null : t.getCause();
    }

    private static String firstWord(String m) {
        if (m == null) {
            return "";
        }
        int space = m.indexOf(' ');
        return space < 0 ? m : m.substring(0, space);
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
