package dev.waterline.watermark.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.Function;

import dev.waterline.session.ClientSession;
import dev.waterline.watermark.WatermarkIndex;
import dev.waterline.watermark.WatermarkKeys;
import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.ZSetOperations;
import org.springframework.data.redis.core.script.RedisScript;

import static dev.waterline.watermark.WatermarkKeys.ACKED_PATTERN;
import static dev.waterline.watermark.WatermarkKeys.ALL_TRUSTED;
import static dev.waterline.watermark.WatermarkKeys.COUNTS;
import static dev.waterline.watermark.WatermarkKeys.MARKER;
import static dev.waterline.watermark.WatermarkKeys.PINS;
import static dev.waterline.watermark.WatermarkKeys.REBUILD;
import static dev.waterline.watermark.WatermarkKeys.ackedKey;
import static dev.waterline.watermark.WatermarkKeys.nodeKey;
import static dev.waterline.watermark.WatermarkKeys.nodeUsersKey;
import static dev.waterline.watermark.WatermarkKeys.owedKey;
import static dev.waterline.watermark.WatermarkKeys.pendingKey;
import static dev.waterline.watermark.WatermarkKeys.sessionKey;

/**
 * The {@link WatermarkIndex} on Redis: the Java face of the watermark scripts, one Redis, the key
 * names {@link dev.waterline.watermark.WatermarkKeys}. Every per-user script also touches
 * {@code wl:cnt} and {@code wl:pins}: the line is one minimum over all users, so the index is one
 * Redis (or, on Redis Cluster, would need one pin set per slot and the line as their minimum).
 * Wired by {@link RedisWatermarkConfig}.
 */
class RedisWatermarkIndex implements WatermarkIndex {

    // Loaded once as text: a resource-backed script would stat its file on every call. Scripts
    // that change a user's ids get the shared repin function in front of them. Every script names
    // each key it touches in KEYS (LuaKeysUnitTests): where a key's name depends on what Redis
    // holds (the node a user is on), it is read first and the script checks it still holds.
    private static final String REPIN = lua("_repin");
    /** A script's answer when the node it was told a user is on is no longer so: read it again. */
    private static final long MOVED = -9;
    /** How many times a call reads a user's node again before it gives up (each retry means another writer moved the user). */
    private static final int READS = 16;
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
    private static final RedisScript<Long> WITHDRAW_NODE = RedisScript.of(lua("withdraw_node"), Long.class);
    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> FORGET_ORPHANS = RedisScript.of(lua("forget_orphans"), List.class);
    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> LOCATE = RedisScript.of(lua("locate"), List.class);

    private final StringRedisTemplate redis;

    RedisWatermarkIndex(StringRedisTemplate redis) {
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

    /** sess, pend, shed, node, cnt, pins: the keys of every script about one user. */
    private static List<String> keys(String user) {
        return List.of(sessionKey(user), pendingKey(user), owedKey(user), nodeKey(user), COUNTS, PINS);
    }

    /** {@link #keys} and the node's set of users and the live nodes. */
    private static List<String> keys(String user, String node) {
        return List.of(sessionKey(user), pendingKey(user), owedKey(user), nodeKey(user), COUNTS, PINS, nodeUsersKey(node), WatermarkKeys.NODES);
    }

    /** The node Redis places {@code user}'s epoch on, or '' when none. */
    private String nodeOf(String user) {
        String node = redis.opsForValue().get(nodeKey(user));
        return node == null ? "" : node;
    }

    /**
     * Runs a script that must name the set of the node {@code user} is on: reads the node, runs
     * {@code call} with it, and reads again while the script answers that the node moved.
     */
    private Long movable(String user, Function<String, Long> call) {
        Long r = MOVED;
        for (int i = 0; i < READS && r != null && r == MOVED; i++) {
            r = call.apply(nodeOf(user));
        }
        if (r != null && r == MOVED) {
            throw new IllegalStateException(user + "'s node moved " + READS + " times while a script ran for it");
        }
        return r;
    }

    @Override
    public Optional<SessionLocation> connect(ClientSession s, String node) {
        List<?> r = null;
        for (int i = 0; i < READS && (r == null || r.size() == 1); i++) {
            String previous = nodeOf(s.userId());
            List<String> keys = new ArrayList<>(keys(s.userId(), node).subList(0, 7));
            keys.add(nodeUsersKey(previous));
            r = redis.execute(CONNECT, keys, s.sessionId(), s.userId(), node, previous);
        }
        if (r == null || r.size() != 2) {
            throw new IllegalStateException("connect.lua answered " + r);
        }
        String session = String.valueOf(r.get(0));
        String previousNode = String.valueOf(r.get(1));
        return session.isEmpty() || previousNode.isEmpty() ? Optional.empty() : Optional.of(new SessionLocation(previousNode, session));
    }

    @Override
    public boolean disconnect(String user, String sessionId) {
        Long r = movable(user, node -> {
            List<String> keys = new ArrayList<>(keys(user));
            keys.add(nodeUsersKey(node));
            return redis.execute(DISCONNECT, keys, sessionId, user, node);
        });
        return r != null && r == 1L;
    }

    @Override
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

    @Override
    public long[] owe(List<Group> groups) {
        return grouped(OWE, groups);
    }

    /** A script's answer about a connection's epoch: 1 named, 0 already named, -1 superseded, -2 gone. */
    private static EpochClaim claim(Long r, EpochClaim ifNone) {
        if (r == null) {
            return ifNone;
        }
        return switch (r.intValue()) {
            case 1 -> EpochClaim.NAMED;
            case 0 -> EpochClaim.ALREADY_NAMED;
            case -1 -> EpochClaim.SUPERSEDED;
            case -2 -> EpochClaim.GONE;
            default -> throw new IllegalStateException("an epoch script answered " + r);
        };
    }

    @Override
    public EpochClaim reassert(ClientSession s, String node, boolean cluster) {
        Long r = movable(s.userId(), previous -> {
            List<String> keys = new ArrayList<>(keys(s.userId(), node));
            keys.add(nodeUsersKey(previous));
            return redis.execute(REASSERT, keys, s.sessionId(), s.userId(), node, cluster ? "1" : "0", previous);
        });
        return claim(r, EpochClaim.SUPERSEDED);
    }

    @Override
    public Statuses status(String user, String sessionId, long token, long generation, boolean cluster, long[] ids) {
        List<String> args = new ArrayList<>(ids.length + 4);
        args.add(sessionId);
        args.add(Long.toString(token));
        args.add(Long.toString(generation));
        args.add(cluster ? "1" : "0");
        for (long id : ids) {
            args.add(Long.toString(id));
        }
        List<?> out = redis.execute(STATUS, List.of(sessionKey(user), pendingKey(user), owedKey(user), MARKER, WatermarkKeys.GENERATION, ALL_TRUSTED, ackedKey(user)),
                args.toArray());
        if (out == null || out.isEmpty() || ((Number) out.get(0)).intValue() == -2) {
            return new Statuses.Unknown();
        }
        if (((Number) out.get(0)).intValue() == -1) {
            return new Statuses.NotTheEpoch();
        }
        List<RowStatus> each = new ArrayList<>(out.size());
        for (Object o : out) {
            each.add(switch (((Number) o).intValue()) {
                case 0 -> RowStatus.NEITHER;
                case 1 -> RowStatus.OWED;
                case 2 -> RowStatus.PENDING;
                default -> throw new IllegalStateException("status.lua answered " + o + " for a row");
            });
        }
        return new Statuses.Known(each);
    }

    @Override
    public long[] ack(List<Group> groups) {
        return grouped(ACK, groups, true);
    }

    @Override
    public EpochClaim rebuildUser(ClientSession s, String node, boolean cluster, long scannedUpTo, long[] ids) {
        Long r = movable(s.userId(), previous -> {
            List<String> args = new ArrayList<>(ids.length + 6);
            args.add(s.sessionId());
            args.add(s.userId());
            args.add(node);
            args.add(cluster ? "1" : "0");
            args.add(Long.toString(scannedUpTo));
            args.add(previous);
            for (long id : ids) {
                args.add(Long.toString(id));
            }
            List<String> keys = new ArrayList<>(keys(s.userId(), node));
            keys.add(ackedKey(s.userId()));
            keys.add(nodeUsersKey(previous));
            return redis.execute(REBUILD_USER, keys, args.toArray());
        });
        return claim(r, EpochClaim.GONE);
    }

    @Override
    public void forgetUser(String user, String node) {
        movable(user, held -> {
            List<String> keys = new ArrayList<>(keys(user));
            keys.add(nodeUsersKey(held));
            return redis.execute(FORGET_USER, keys, user, node == null ? "" : node, held);
        });
    }

    @Override
    public long withdrawNode(String node, int max) {
        while (true) {
            Set<String> read = redis.opsForSet().distinctRandomMembers(nodeUsersKey(node), max);
            List<String> users = read == null ? List.of() : new ArrayList<>(read);
            if (users.isEmpty()) {
                return 0;
            }
            List<String> keys = new ArrayList<>(3 + 4 * users.size());
            keys.add(nodeUsersKey(node));
            keys.add(COUNTS);
            keys.add(PINS);
            List<String> args = new ArrayList<>(1 + users.size());
            args.add(node);
            for (String u : users) {
                keys.add(nodeKey(u));
                keys.add(sessionKey(u));
                keys.add(pendingKey(u));
                keys.add(owedKey(u));
                args.add(u);
            }
            Long r = redis.execute(WITHDRAW_NODE, keys, args.toArray());
            if (r == null) {
                throw new IllegalStateException("withdraw_node.lua answered nothing");
            }
            if (r > 0) {
                return r;
            }
            // every user read was taken meanwhile: read the set again
        }
    }

    @Override
    public long forgetOrphans() {
        long removed = 0;
        long from = 0;
        while (true) {
            Set<String> users = redis.opsForZSet().range(PINS, from, from + 499);
            List<String> page = users == null ? List.of() : new ArrayList<>(users);
            long gone = 0;
            if (!page.isEmpty()) {
                List<String> nodeKeys = page.stream().map(WatermarkKeys::nodeKey).toList();
                List<String> nodes = redis.opsForValue().multiGet(nodeKeys);
                List<String> keys = new ArrayList<>(3 + 5 * page.size());
                keys.add(PINS);
                keys.add(WatermarkKeys.NODES);
                keys.add(COUNTS);
                List<String> args = new ArrayList<>(2 * page.size());
                for (int i = 0; i < page.size(); i++) {
                    String u = page.get(i);
                    String node = nodes == null || nodes.get(i) == null ? "" : nodes.get(i);
                    keys.add(nodeKey(u));
                    keys.add(sessionKey(u));
                    keys.add(pendingKey(u));
                    keys.add(owedKey(u));
                    keys.add(nodeUsersKey(node));
                    args.add(u);
                    args.add(node);
                }
                List<?> r = redis.execute(FORGET_ORPHANS, keys, args.toArray());
                if (r == null || r.size() != 2) {
                    throw new IllegalStateException("forget_orphans.lua answered " + r);
                }
                removed += ((Number) r.get(0)).longValue();
                // a pin gone between the page's read and the script (a user who left) has left the
                // ranks below the page's end too: the next page starts that much lower
                gone = ((Number) r.get(0)).longValue() + ((Number) r.get(1)).longValue();
            }
            long size = page.size();
            if (size < 500) {
                return removed;
            }
            from += size - gone;
        }
    }

    @Override
    public Optional<Map<String, SessionLocation>> locateIfWhole(Collection<String> users, long token, long generation, boolean cluster) {
        List<String> args = new ArrayList<>(users.size() + 3);
        args.add(Long.toString(token));
        args.add(Long.toString(generation));
        args.add(cluster ? "1" : "0");
        args.addAll(users);
        List<String> keys = new ArrayList<>(3 + 2 * users.size());
        keys.add(MARKER);
        keys.add(WatermarkKeys.GENERATION);
        keys.add(ALL_TRUSTED);
        for (String u : users) {
            keys.add(nodeKey(u));
            keys.add(sessionKey(u));
        }
        List<?> r = redis.execute(LOCATE, keys, args.toArray());
        if (r == null || (!r.isEmpty() && r.getFirst() instanceof Number)) {
            return Optional.empty();
        }
        Map<String, SessionLocation> out = new HashMap<>();
        int i = 0;
        for (String u : users) {
            String node = String.valueOf(r.get(i++));
            String session = String.valueOf(r.get(i++));
            if (!node.isEmpty() && !session.isEmpty()) {
                out.put(u, new SessionLocation(node, session));
            }
        }
        return Optional.of(out);
    }

    @Override
    public Set<String> nodeUsers(String node) {
        Set<String> users = redis.opsForSet().members(nodeUsersKey(node));
        return users == null ? Set.of() : users;
    }

    @Override
    public Map<String, SessionLocation> locate(Collection<String> users) {
        List<String> keys = new ArrayList<>(users.size() * 2);
        for (String u : users) {
            keys.add(nodeKey(u));
            keys.add(sessionKey(u));
        }
        List<String> values = redis.opsForValue().multiGet(keys);
        Map<String, SessionLocation> out = new HashMap<>();
        if (values == null) {
            return out;
        }
        int i = 0;
        for (String u : users) {
            String node = values.get(i++);
            String session = values.get(i++);
            if (node != null && session != null) {
                out.put(u, new SessionLocation(node, session));
            }
        }
        return out;
    }

    @Override
    public OptionalLong lowestPin() {
        Set<ZSetOperations.TypedTuple<String>> low = redis.opsForZSet().rangeWithScores(PINS, 0, 0);
        if (low == null || low.isEmpty()) {
            return OptionalLong.empty();
        }
        Double score = low.iterator().next().getScore();
        return score == null ? OptionalLong.empty() : OptionalLong.of(score.longValue());
    }

    @Override
    public Set<String> pinnedUsers() {
        Set<String> users = redis.opsForZSet().range(PINS, 0, -1);
        return users == null ? Set.of() : users;
    }

    @Override
    public Map<String, Long> pendingCounts() {
        Map<String, Long> out = new HashMap<>();
        redis.<String, String>opsForHash().entries(COUNTS).forEach((u, n) -> out.put(u, Long.parseLong(n)));
        return out;
    }

    @Override
    public OptionalLong marker() {
        String v = redis.opsForValue().get(MARKER);
        return v == null ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(v));
    }

    @Override
    public OptionalLong generation() {
        String v = redis.opsForValue().get(WatermarkKeys.GENERATION);
        return v == null ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(v));
    }

    @Override
    public boolean rotateMarker(long expected, long next) {
        Long r = redis.execute(ROTATE_MARKER, List.of(MARKER), Long.toString(expected), Long.toString(next));
        return r != null && r == 1L;
    }

    @Override
    public void newGeneration(long token, long generation) {
        redis.execute(SET_GENERATION, List.of(MARKER, WatermarkKeys.GENERATION, ALL_TRUSTED, REBUILD), Long.toString(token), Long.toString(generation));
    }

    @Override
    public long forgetAcked() {
        long n = 0;
        List<String> batch = new ArrayList<>();
        try (var keys = redis.scan(ScanOptions.scanOptions().match(ACKED_PATTERN).count(1000).build())) {
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

    @Override
    public void requestNewGeneration(String node) {
        redis.opsForValue().set(REBUILD, node);
    }

    @Override
    public boolean newGenerationRequested() {
        return Boolean.TRUE.equals(redis.hasKey(REBUILD));
    }

    @Override
    public void allTrusted(long generation, Duration ttl) {
        redis.opsForValue().set(ALL_TRUSTED, Long.toString(generation), ttl);
    }

    @Override
    public void notAllTrusted() {
        redis.delete(ALL_TRUSTED);
    }
}
