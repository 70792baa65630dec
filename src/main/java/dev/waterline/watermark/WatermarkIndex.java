package dev.waterline.watermark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

import dev.waterline.redis.RedisKeys;
import dev.waterline.session.ClientSession;
import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.ZSetOperations;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.stereotype.Component;

/**
 * Java face of the watermark scripts. Every call that acts for a connection names it: a script
 * run for a connection that is no longer its user's registered epoch changes nothing.
 *
 * <p>Redis keys: per user {@code wl:sess:{user}} (the epoch: a session id), {@code wl:node:{user}}
 * (the node that holds it), {@code wl:pend:{user}} and {@code wl:shed:{user}} (pending and owed
 * delivery ids), {@code wl:ackd:{user}} (acked ids whose rows the poller has not judged yet), the user id a hash tag so that one user's keys share a Redis Cluster slot; and
 * global {@code wl:cnt} (pending counts), {@code wl:pins} (the pins), {@code wl:marker},
 * {@code wl:gen}, {@code wl:alltrusted}, {@code wl:rebuild}, {@code wl:nodes} and
 * {@code wl:users:<node>} (each node's users). Every per-user script also touches
 * {@code wl:cnt} and {@code wl:pins}: the line is one minimum over all users, so the index is one
 * Redis (or, on Redis Cluster, would need one pin set per slot and the line as their minimum).
 */
@Component
public class WatermarkIndex {

    public static final String PINS = "wl:pins";
    public static final String COUNTS = "wl:cnt";
    public static final String MARKER = "wl:marker";
    public static final String GENERATION = RedisKeys.GENERATION;
    public static final String ALL_TRUSTED = "wl:alltrusted";
    public static final String REBUILD = "wl:rebuild";
    /** The live nodes and their last heartbeats (see {@link RedisKeys#NODES}). */
    public static final String NODES = RedisKeys.NODES;

    // Loaded once as text: a resource-backed script would stat its file on every call. Scripts
    // that change a user's ids get the shared repin function in front of them; scripts that reach
    // users' keys by name, the key names.
    private static final String REPIN = lua("_repin");
    private static final String KEYS = lua("_keys");
    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> DELIVER = RedisScript.of(REPIN + lua("deliver"), List.class);
    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> OWE = RedisScript.of(REPIN + lua("owe"), List.class);
    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> STATUS = RedisScript.of(lua("status"), List.class);
    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> ACK = RedisScript.of(REPIN + lua("ack"), List.class);
    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> CONNECT = RedisScript.of(lua("connect"), List.class);
    private static final RedisScript<Long> DISCONNECT = RedisScript.of(lua("disconnect"), Long.class);
    private static final RedisScript<Long> REBUILD_USER = RedisScript.of(REPIN + lua("rebuild_user"), Long.class);
    private static final RedisScript<Long> FORGET_USER = RedisScript.of(lua("forget_user"), Long.class);
    private static final RedisScript<Long> REASSERT = RedisScript.of(lua("reassert"), Long.class);
    private static final RedisScript<Long> ROTATE_MARKER = RedisScript.of(lua("rotate_marker"), Long.class);
    private static final RedisScript<Long> SET_GENERATION = RedisScript.of(lua("set_generation"), Long.class);
    private static final RedisScript<Long> WITHDRAW_NODE = RedisScript.of(KEYS + lua("withdraw_node"), Long.class);
    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> FORGET_ORPHANS = RedisScript.of(KEYS + lua("forget_orphans"), List.class);
    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> LOCATE = RedisScript.of(KEYS + lua("locate"), List.class);

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
        return "wl:sess:{" + user + "}";
    }

    public static String pendingKey(String user) {
        return "wl:pend:{" + user + "}";
    }

    public static String owedKey(String user) {
        return "wl:shed:{" + user + "}";
    }

    /** Ids the user acked whose rows the poller has not judged yet (ack.lua, status.lua, rebuild_user.lua). */
    public static String ackedKey(String user) {
        return "wl:ackd:{" + user + "}";
    }

    public static String nodeKey(String user) {
        return "wl:node:{" + user + "}";
    }

    public static String nodeUsersKey(String node) {
        return "wl:users:" + node;
    }

    /** sess, pend, shed, node, cnt, pins: the keys of every script about one user. */
    private static List<String> keys(String user) {
        return List.of(sessionKey(user), pendingKey(user), owedKey(user), nodeKey(user), COUNTS, PINS);
    }

    /** {@link #keys} and the node's set of users and the live nodes. */
    private static List<String> keys(String user, String node) {
        return List.of(sessionKey(user), pendingKey(user), owedKey(user), nodeKey(user), COUNTS, PINS, nodeUsersKey(node), NODES);
    }

    /** Where a user's earlier epoch was when a new one took its place ({@code null} fields: there was none). */
    public record Previous(String sessionId, String node) {
    }

    /**
     * Makes {@code s}, on {@code node}, its user's epoch, dropping whatever an earlier connection
     * had pending; returns where the earlier epoch was, so that it can be closed there.
     */
    public Previous connect(ClientSession s, String node) {
        List<?> r = redis.execute(CONNECT, keys(s.userId(), node).subList(0, 7), s.sessionId(), s.userId(), node);
        if (r == null || r.size() != 2) {
            throw new IllegalStateException("connect.lua answered " + r);
        }
        String session = String.valueOf(r.get(0));
        String previousNode = String.valueOf(r.get(1));
        return new Previous(session.isEmpty() ? null : session, previousNode.isEmpty() ? null : previousNode);
    }

    /** Removes {@code s} from live delivery if it is still its user's epoch; true when it was. Never an ack. */
    public boolean disconnect(ClientSession s) {
        return disconnect(s.userId(), s.sessionId());
    }

    /** {@link #disconnect(ClientSession)} by user and session id (the connection may be on another node). */
    public boolean disconnect(String user, String sessionId) {
        Long r = redis.execute(DISCONNECT, keys(user), sessionId, user);
        return r != null && r == 1L;
    }

    /** Delivery ids for one connection, as one group of a batched script call. */
    public record Group(String userId, String sessionId, long[] ids, ClientSession session) {

        /** A group for a connection of this node. */
        public static Group of(ClientSession session, long[] ids) {
            return new Group(session.userId(), session.sessionId(), ids, session);
        }

        /** A group for a connection on another node, known by user and session id only. */
        public static Group remote(String userId, String sessionId, long[] ids) {
            return new Group(userId, sessionId, ids, null);
        }
    }

    /**
     * Records {@code ids} as delivered-but-unacked for {@code s}. Returns the user's number of
     * pending ids, or -1 when {@code s} is no longer its user's epoch (nothing was recorded).
     */
    public long deliver(ClientSession s, long[] ids) {
        return deliver(List.of(Group.of(s, ids)))[0];
    }

    /**
     * {@link #deliver(ClientSession, long[])} for many connections in one script call: per group,
     * in order, the user's number of pending ids or -1.
     */
    public long[] deliver(List<Group> groups) {
        return grouped(DELIVER, groups);
    }

    private long[] grouped(@SuppressWarnings("rawtypes") RedisScript<List> script, List<Group> groups) {
        return grouped(script, groups, false);
    }

    /** One call for many connections' groups: per group its user's sess, pend and shed keys (and its acked set, {@code withAcked}). */
    private long[] grouped(@SuppressWarnings("rawtypes") RedisScript<List> script, List<Group> groups, boolean withAcked) {
        long[] out = new long[groups.size()];
        if (groups.isEmpty()) {
            return out;
        }
        List<String> keys = new ArrayList<>(2 + 4 * groups.size());
        keys.add(COUNTS);
        keys.add(PINS);
        List<String> args = new ArrayList<>(groups.size() * 4);
        for (Group g : groups) {
            String user = g.userId();
            keys.add(sessionKey(user));
            keys.add(pendingKey(user));
            keys.add(owedKey(user));
            if (withAcked) {
                keys.add(ackedKey(user));
            }
            args.add(g.sessionId());
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
     * Records {@code ids} as owed to {@code s} without writing them (shed by the fast path, or about
     * to be handed to the node that holds {@code s}): they hold the line down but do not count
     * against max-pending. False when {@code s} is no longer its user's epoch.
     */
    public boolean owe(ClientSession s, long[] ids) {
        return owe(List.of(Group.of(s, ids)))[0] >= 0;
    }

    /** {@link #owe(ClientSession, long[])} for many connections in one call: per group 1, or -1 for a connection no longer the epoch. */
    public long[] owe(List<Group> groups) {
        return grouped(OWE, groups);
    }

    /** {@link #reassert} and {@link #rebuildUser}: another connection is the epoch (close it with 4009). */
    public static final int SUPERSEDED = -1;
    /** {@link #reassert} and {@link #rebuildUser}: no connection is the epoch, or this node is not alive (close it with 1012). */
    public static final int GONE = -2;

    /**
     * The single-node mode: names {@code s} as its user's epoch on {@code node} when Redis names
     * another connection or none (Redis was down when it connected, or lost its data): 1 when it
     * did, 0 when Redis already named it. Records made for {@code s} meanwhile are kept. The
     * cluster never re-names one (reassert.lua says why): 0, {@link #SUPERSEDED} or {@link #GONE}.
     */
    public int reassert(ClientSession s, String node, boolean cluster) {
        Long r = redis.execute(REASSERT, keys(s.userId(), node), s.sessionId(), s.userId(), node, cluster ? "1" : "0");
        return r == null ? -1 : r.intValue();
    }

    /** Where a row stands for a connection: {@link #PENDING}, {@link #OWED} or {@link #NEITHER}. */
    public static final int NEITHER = 0;
    public static final int OWED = 1;
    public static final int PENDING = 2;

    /**
     * Per id its status for {@code s} (an id judged {@link #NEITHER} also leaves the user's acked
     * set: its row is being retired), judged under PostgreSQL's marker {@code token} and the
     * {@code generation} the caller trusts (and, in the cluster, the leader's word that every node
     * trusts it); null when the index is not known to be whole, and an empty array when the
     * connection is no longer its user's epoch.
     */
    public int[] status(String user, String sessionId, long token, long generation, boolean cluster, long[] ids) {
        List<String> args = new ArrayList<>(ids.length + 4);
        args.add(sessionId);
        args.add(Long.toString(token));
        args.add(Long.toString(generation));
        args.add(cluster ? "1" : "0");
        for (long id : ids) {
            args.add(Long.toString(id));
        }
        List<?> out = redis.execute(STATUS, List.of(sessionKey(user), pendingKey(user), owedKey(user), MARKER, GENERATION, ALL_TRUSTED, ackedKey(user)),
                args.toArray());
        if (out == null || out.isEmpty() || ((Number) out.get(0)).intValue() == -2) {
            return null;
        }
        if (((Number) out.get(0)).intValue() == -1) {
            return new int[0];
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
        return (int) ack(List.of(Group.of(s, ids)))[0];
    }

    /** Acks for many connections in one script call: per group, in order, how many were pending. */
    public long[] ack(List<Group> groups) {
        return grouped(ACK, groups, true);
    }

    /**
     * Rebuild: names {@code s} as its user's epoch on {@code node} (the cluster: only if Redis still
     * does), records {@code ids} as owed to it but those in the user's acked set, and drops pending or owed ids up to
     * {@code scannedUpTo} that are not among them. 1, or in the cluster {@link #SUPERSEDED} or
     * {@link #GONE} when the connection must close instead.
     */
    public int rebuildUser(ClientSession s, String node, boolean cluster, long scannedUpTo, long[] ids) {
        List<String> args = new ArrayList<>(ids.length + 5);
        args.add(s.sessionId());
        args.add(s.userId());
        args.add(node);
        args.add(cluster ? "1" : "0");
        args.add(Long.toString(scannedUpTo));
        for (long id : ids) {
            args.add(Long.toString(id));
        }
        List<String> keys = new ArrayList<>(keys(s.userId(), node));
        keys.add(ackedKey(s.userId()));
        Long r = redis.execute(REBUILD_USER, keys, args.toArray());
        return r == null ? GONE : r.intValue();
    }

    /**
     * Rebuild: removes a user with no connection on the rebuilding node from live delivery, if
     * Redis places its epoch on {@code node} ({@code null}: wherever it is, the single-node mode).
     */
    public void forgetUser(String user, String node) {
        redis.execute(FORGET_USER, keys(user), user, node == null ? "" : node);
    }

    /**
     * Withdraws up to {@code max} of the users whose epoch is on {@code node} (it left or died);
     * returns how many it took from the node's set (0: none left).
     */
    public long withdrawNode(String node, int max) {
        Long r = redis.execute(WITHDRAW_NODE, List.of(nodeUsersKey(node), COUNTS, PINS), node, Integer.toString(max));
        return r == null ? 0 : r;
    }

    /** After a new generation: removes every pinned user whose epoch is on no node in {@code wl:nodes}; returns how many. */
    public long forgetOrphans() {
        long removed = 0;
        long from = 0;
        while (true) {
            List<?> r = redis.execute(FORGET_ORPHANS, List.of(PINS, NODES, COUNTS), Long.toString(from), "500");
            if (r == null || r.size() != 2) {
                throw new IllegalStateException("forget_orphans.lua answered " + r);
            }
            long page = ((Number) r.get(0)).longValue();
            long gone = ((Number) r.get(1)).longValue();
            removed += gone;
            if (page < 500) {
                return removed;
            }
            from += page - gone;
        }
    }

    /**
     * {@link #locate}, only while the index is known to be whole under PostgreSQL's marker
     * {@code token} and {@code generation} (and, in the cluster, the leader's word that every node
     * trusts it): null otherwise. Then a user absent from the answer is connected nowhere.
     */
    public Map<String, String[]> locateIfWhole(Collection<String> users, long token, long generation, boolean cluster) {
        List<String> args = new ArrayList<>(users.size() + 3);
        args.add(Long.toString(token));
        args.add(Long.toString(generation));
        args.add(cluster ? "1" : "0");
        args.addAll(users);
        List<?> r = redis.execute(LOCATE, List.of(MARKER, GENERATION, ALL_TRUSTED), args.toArray());
        if (r == null || (!r.isEmpty() && r.getFirst() instanceof Number)) {
            return null;
        }
        Map<String, String[]> out = new HashMap<>();
        int i = 0;
        for (String u : users) {
            String node = String.valueOf(r.get(i++));
            String session = String.valueOf(r.get(i++));
            if (!node.isEmpty() && !session.isEmpty()) {
                out.put(u, new String[] {node, session});
            }
        }
        return out;
    }

    /** The users whose epoch Redis places on {@code node}. */
    public Set<String> nodeUsers(String node) {
        Set<String> users = redis.opsForSet().members(nodeUsersKey(node));
        return users == null ? Set.of() : users;
    }

    /** Where each of {@code users} has its epoch: user → {node, session id}, for users Redis names both of. */
    public Map<String, String[]> locate(Collection<String> users) {
        List<String> keys = new ArrayList<>(users.size() * 2);
        for (String u : users) {
            keys.add(nodeKey(u));
            keys.add(sessionKey(u));
        }
        List<String> values = redis.opsForValue().multiGet(keys);
        Map<String, String[]> out = new HashMap<>();
        if (values == null) {
            return out;
        }
        int i = 0;
        for (String u : users) {
            String node = values.get(i++);
            String session = values.get(i++);
            if (node != null && session != null) {
                out.put(u, new String[] {node, session});
            }
        }
        return out;
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

    /** The generation Redis holds, or null when it holds none. */
    public Long generation() {
        String v = redis.opsForValue().get(GENERATION);
        return v == null ? null : Long.parseLong(v);
    }

    /** Moves the marker from {@code expected} to {@code next}; false when Redis held something else. */
    public boolean rotateMarker(long expected, long next) {
        Long r = redis.execute(ROTATE_MARKER, List.of(MARKER), Long.toString(expected), Long.toString(next));
        return r != null && r == 1L;
    }

    /** A new generation (after PostgreSQL has it): marker and generation set, the leader's word and any request for it dropped. */
    public void newGeneration(long token, long generation) {
        redis.execute(SET_GENERATION, List.of(MARKER, GENERATION, ALL_TRUSTED, REBUILD), Long.toString(token), Long.toString(generation));
    }

    /**
     * Drops every user's acked set (a rebuild then owes those rows again: repeats, never a skip).
     * For a Redis that is ahead of PostgreSQL, whose acked sets may name ids the database hands out
     * again. Returns how many sets were dropped.
     */
    public long forgetAcked() {
        long n = 0;
        List<String> batch = new ArrayList<>();
        try (var keys = redis.scan(org.springframework.data.redis.core.ScanOptions.scanOptions().match("wl:ackd:*").count(1000).build())) {
            while (keys.hasNext()) {
                batch.add(keys.next());
                if (batch.size() == 500) {
                    n += deleted(redis.delete(batch));
                    batch.clear();
                }
            }
        }
        if (!batch.isEmpty()) {
            n += deleted(redis.delete(batch));
        }
        return n;
    }

    private static long deleted(Long n) {
        return n == null ? 0 : n;
    }

    /** A node asks the leader for a new generation (it may have missed a write). */
    public void requestNewGeneration(String node) {
        redis.opsForValue().set(REBUILD, node);
    }

    /** Whether some node has asked for a new generation. */
    public boolean newGenerationRequested() {
        return Boolean.TRUE.equals(redis.hasKey(REBUILD));
    }

    /** The leader's word, for {@code ttl}, that every live node trusts the index under {@code generation}. */
    public void allTrusted(long generation, Duration ttl) {
        redis.opsForValue().set(ALL_TRUSTED, Long.toString(generation), ttl);
    }

    /** The leader takes its word back: some node does not trust the index. */
    public void notAllTrusted() {
        redis.delete(ALL_TRUSTED);
    }
}
