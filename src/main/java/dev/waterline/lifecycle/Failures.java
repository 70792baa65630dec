package dev.waterline.lifecycle;

import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.util.Set;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.RecoverableDataAccessException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.transaction.TransactionException;

/**
 * Tells a failure caused by one item of a batch (a value PostgreSQL refuses to store, a script
 * that refuses an argument) from a failure of the infrastructure (PostgreSQL or Redis
 * unreachable, read-only after a failover, loading, shutting down, out of memory, a lock or
 * statement timeout, a connection lost). Only the first kind is isolated to its item
 * ({@link Isolation}); the second says nothing about the work that met it, which is refused as
 * {@code unavailable} (the client retries), whole.
 *
 * <p>Item-caused, exactly: an SQLSTATE of class 22 (data exception: a byte the encoding refuses,
 * a value out of range), 23 (integrity constraint violation) or 54 (program limit exceeded: a
 * value too large to index); a Redis command error other than those Redis answers while
 * unavailable (LOADING, READONLY, BUSY, OOM, MASTERDOWN, TRYAGAIN, CLUSTERDOWN); or a failure
 * that reached no database or Redis at all (the driver refusing a parameter before sending
 * it). Everything else, every other SQLSTATE included (25006 read-only transaction, 42 and XX,
 * which only a bug or a broken schema could cause and no single item), is unavailable.
 */
public final class Failures {

    /** SQLSTATE classes of a failure caused by a statement's data. */
    private static final Set<String> ITEM_CLASSES = Set.of("22", "23", "54");

    /** Error prefixes Redis answers while it cannot serve, whatever the command. */
    private static final Set<String> REDIS_UNAVAILABLE = Set.of(
            "LOADING", "READONLY", "BUSY", "OOM", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN", "NOREPLICAS", "NOSCRIPT");

    private Failures() {
    }

    /** SQLSTATE classes (and single states) of a server that cannot serve right now. */
    private static final Set<String> INFRASTRUCTURE_CLASSES = Set.of("08", "40", "53", "57", "58");
    private static final Set<String> INFRASTRUCTURE_STATES = Set.of("25006", "55P03", "25P03");

    /**
     * Whether {@code e} says PostgreSQL or Redis cannot serve right now (unreachable, read-only,
     * loading, shutting down, out of resources, a timeout): the answer is 503 / {@code unavailable},
     * and a retry may succeed. Narrower than {@code !causedByItem(e)}: a bug is neither.
     */
    public static boolean infrastructure(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof DataAccessResourceFailureException || t instanceof TransientDataAccessException
                    || t instanceof RecoverableDataAccessException || t instanceof TransactionException
                    || t instanceof RedisConnectionFailureException
                    || t instanceof SQLTransientException || t instanceof SQLRecoverableException) {
                return true;
            }
            if (t instanceof SQLException s && s.getSQLState() != null && s.getSQLState().length() >= 2) {
                String state = s.getSQLState();
                return INFRASTRUCTURE_CLASSES.contains(state.substring(0, 2)) || INFRASTRUCTURE_STATES.contains(state);
            }
            if (t instanceof RedisCommandExecutionException r) {
                return REDIS_UNAVAILABLE.contains(firstWord(r.getMessage()));
            }
            if (t instanceof RedisException) {
                return true;
            }
        }
        return false;
    }

    private static String firstWord(String m) {
        if (m == null) {
            return "";
        }
        int space = m.indexOf(' ');
        return space < 0 ? m : m.substring(0, space);
    }

    /** Whether {@code e} may be caused by one item of the work that met it (see the class note). */
    public static boolean causedByItem(Throwable e) {
        boolean reachedStorage = false;
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof DataAccessResourceFailureException || t instanceof TransientDataAccessException
                    || t instanceof RecoverableDataAccessException || t instanceof TransactionException
                    || t instanceof RedisConnectionFailureException
                    || t instanceof SQLTransientException || t instanceof SQLRecoverableException) {
                return false;
            }
            if (t instanceof SQLException s) {
                String state = s.getSQLState();
                return state != null && state.length() >= 2 && ITEM_CLASSES.contains(state.substring(0, 2));
            }
            if (t instanceof RedisCommandExecutionException r) {
                return !REDIS_UNAVAILABLE.contains(firstWord(r.getMessage()));
            }
            if (t instanceof RedisException) {
                return false;   // connection, timeout, interrupted: Lettuce could not talk to Redis
            }
            if (t instanceof java.io.IOException) {
                reachedStorage = true;
            }
        }
        return !reachedStorage;
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
