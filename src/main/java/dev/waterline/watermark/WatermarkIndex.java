package dev.waterline.watermark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

import dev.waterline.session.ClientSession;
import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.ZSetOperations;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.stereotype.Component;

/**
 * Java face of the watermark scripts. Every call that acts for a connection names it: a script
 * run for a connection that is no longer its user's registered epoch changes nothing.
 */
@Component
public class WatermarkIndex {

    public static final String PINS = "wl:pins";
    public static final String COUNTS = "wl:cnt";
    public static final String MARKER = "wl:marker";

    // Loaded once as text: a resource-backed script would stat its file on every call. Scripts
    // that change a user's ids get the shared repin function in front of them.
    private static final String REPIN = lua("_repin");
    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> DELIVER = RedisScript.of(REPIN + lua("deliver"), List.class);
    private static final RedisScript<Long> SHED = RedisScript.of(REPIN + lua("shed"), Long.class);
    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> STATUS = RedisScript.of(lua("status"), List.class);
    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> ACK = RedisScript.of(REPIN + lua("ack"), List.class);
    private static final RedisScript<Long> CONNECT = RedisScript.of(lua("connect"), Long.class);
    private static final RedisScript<Long> DISCONNECT = RedisScript.of(lua("disconnect"), Long.class);
    private static final RedisScript<Long> REBUILD_USER = RedisScript.of(REPIN + lua("rebuild_user"), Long.class);
    private static final RedisScript<Long> FORGET_USER = RedisScript.of(lua("forget_user"), Long.class);
    private static final RedisScript<Long> REASSERT = RedisScript.of(lua("reassert"), Long.class);
    private static final RedisScript<Long> ROTATE_MARKER = RedisScript.of(lua("rotate_marker"), Long.class);

    private final StringRedisTemplate redis;

    public WatermarkIndex(StringRedisTemplate redis) {
        this.redis = redis;
    }

    private static String lua(String name) {
        try (var in = new ClassPathResource("watermark/" + name + ".lua").getInputStream()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        catch (IOException e) {
            throw new UncheckedIOException("missing watermark script " + name, e);
        }
    }

    public static String sessionKey(String user) {
        return "wl:sess:" + user;
    }

    public static String pendingKey(String user) {
        return "wl:pend:" + user;
    }

    public static String owedKey(String user) {
        return "wl:shed:" + user;
    }

    private static List<String> keys(String user) {
        return List.of(sessionKey(user), pendingKey(user), owedKey(user), COUNTS, PINS);
    }

    private static Object[] args(String first, String second, long[] ids) {
        List<String> args = new ArrayList<>(ids.length + 2);
        if (first != null) {
            args.add(first);
        }
        if (second != null) {
            args.add(second);
        }
        for (long id : ids) {
            args.add(Long.toString(id));
        }
        return args.toArray();
    }

    /** Makes {@code s} its user's epoch, dropping whatever an earlier connection had pending. */
    public void connect(ClientSession s) {
        redis.execute(CONNECT, keys(s.userId()), s.sessionId(), s.userId());
    }

    /** Removes {@code s} from live delivery if it is still its user's epoch; true when it was. Never an ack. */
    public boolean disconnect(ClientSession s) {
        Long r = redis.execute(DISCONNECT, keys(s.userId()), s.sessionId(), s.userId());
        return r != null && r == 1L;
    }

    /** Delivery ids for one connection, as one group of a batched script call. */
    public record Group(ClientSession session, long[] ids) {
    }

    /**
     * Records {@code ids} as delivered-but-unacked for {@code s}. Returns the user's number of
     * pending ids, or -1 when {@code s} is no longer its user's epoch (nothing was recorded).
     */
    public long deliver(ClientSession s, long[] ids) {
        return deliver(List.of(new Group(s, ids)))[0];
    }

    /**
     * {@link #deliver(ClientSession, long[])} for many connections in one script call: per group,
     * in order, the user's number of pending ids or -1.
     */
    public long[] deliver(List<Group> groups) {
        return grouped(DELIVER, groups);
    }

    private long[] grouped(@SuppressWarnings("rawtypes") RedisScript<List> script, List<Group> groups) {
        long[] out = new long[groups.size()];
        if (groups.isEmpty()) {
            return out;
        }
        List<String> keys = new ArrayList<>(2 + 3 * groups.size());
        keys.add(COUNTS);
        keys.add(PINS);
        List<String> args = new ArrayList<>(groups.size() * 4);
        for (Group g : groups) {
            String user = g.session().userId();
            keys.add(sessionKey(user));
            keys.add(pendingKey(user));
            keys.add(owedKey(user));
            args.add(g.session().sessionId());
            args.add(user);
            args.add(Integer.toString(g.ids().length));
            for (long id : g.ids()) {
                args.add(Long.toString(id));
            }
        }
        List<?> r = redis.execute(script, keys, args.toArray());
        if (r == null || r.size() != out.length) {
            throw new IllegalStateException("watermark script answered " + r + " for " + out.length + " groups");
        }
        for (int i = 0; i < out.length; i++) {
            out[i] = ((Number) r.get(i)).longValue();
        }
        return out;
    }

    /**
     * Records {@code ids} as owed to {@code s} without writing them (shed by the fast path): they
     * hold the line down but do not count against max-pending. False when {@code s} is no longer
     * its user's epoch.
     */
    public boolean shed(ClientSession s, long[] ids) {
        Long r = redis.execute(SHED, keys(s.userId()), args(s.sessionId(), s.userId(), ids));
        return r != null && r >= 0;
    }

    /**
     * Names {@code s} as its user's epoch only if Redis names another connection (or none);
     * returns whether it did. Records made for {@code s} meanwhile are kept.
     */
    public boolean reassert(ClientSession s) {
        Long r = redis.execute(REASSERT, keys(s.userId()), s.sessionId(), s.userId());
        return r != null && r == 1L;
    }

    /** Where a row stands for a connection: {@link #PENDING}, {@link #OWED} or {@link #NEITHER}. */
    public static final int NEITHER = 0;
    public static final int OWED = 1;
    public static final int PENDING = 2;

    /**
     * Per id its status for {@code s}, judged under {@code marker}; null when {@code s} is no
     * longer its user's epoch or Redis no longer holds that marker (the index may not be whole).
     */
    public int[] status(ClientSession s, long marker, long[] ids) {
        List<?> out = redis.execute(STATUS, List.of(sessionKey(s.userId()), pendingKey(s.userId()), owedKey(s.userId()), MARKER),
                args(s.sessionId(), Long.toString(marker), ids));
        if (out == null || out.isEmpty() || ((Number) out.get(0)).intValue() < 0) {
            return null;
        }
        int[] status = new int[out.size()];
        for (int i = 0; i < status.length; i++) {
            status[i] = ((Number) out.get(i)).intValue();
        }
        return status;
    }

    /** Acks {@code ids} for {@code s}; returns how many were pending. */
    public int ack(ClientSession s, long[] ids) {
        if (ids.length == 0) {
            return 0;
        }
        return (int) ack(List.of(new Group(s, ids)))[0];
    }

    /** Acks for many connections in one script call: per group, in order, how many were pending. */
    public long[] ack(List<Group> groups) {
        return grouped(ACK, groups);
    }

    /**
     * Rebuild: names {@code s} as its user's epoch, records {@code ids} as owed to it, and drops
     * pending or owed ids up to {@code scannedUpTo} that are not among them.
     */
    public void rebuildUser(ClientSession s, long scannedUpTo, long[] ids) {
        List<String> args = new ArrayList<>(ids.length + 3);
        args.add(s.sessionId());
        args.add(s.userId());
        args.add(Long.toString(scannedUpTo));
        for (long id : ids) {
            args.add(Long.toString(id));
        }
        redis.execute(REBUILD_USER, keys(s.userId()), args.toArray());
    }

    /** Rebuild: removes a user with no connection here from live delivery. */
    public void forgetUser(String user) {
        redis.execute(FORGET_USER, keys(user), user);
    }

    /** The lowest pin over every user in live delivery, if any user holds one. */
    public OptionalLong lowestPin() {
        Set<ZSetOperations.TypedTuple<String>> low = redis.opsForZSet().rangeWithScores(PINS, 0, 0);
        if (low == null || low.isEmpty()) {
            return OptionalLong.empty();
        }
        Double score = low.iterator().next().getScore();
        return score == null ? OptionalLong.empty() : OptionalLong.of(score.longValue());
    }

    /** Users that hold a pin. */
    public Set<String> pinnedUsers() {
        Set<String> users = redis.opsForZSet().range(PINS, 0, -1);
        return users == null ? Set.of() : users;
    }

    /** Number of pending ids per user in live delivery. */
    public Map<String, Long> pendingCounts() {
        Map<String, Long> out = new HashMap<>();
        redis.<String, String>opsForHash().entries(COUNTS).forEach((u, n) -> out.put(u, Long.parseLong(n)));
        return out;
    }

    /** The marker token Redis holds, or null when it holds none. */
    public Long marker() {
        String v = redis.opsForValue().get(MARKER);
        return v == null ? null : Long.parseLong(v);
    }

    public void marker(long token) {
        redis.opsForValue().set(MARKER, Long.toString(token));
    }

    /** Moves the marker from {@code expected} to {@code next}; false when Redis held something else. */
    public boolean rotateMarker(long expected, long next) {
        Long r = redis.execute(ROTATE_MARKER, List.of(MARKER), Long.toString(expected), Long.toString(next));
        return r != null && r == 1L;
    }
}
