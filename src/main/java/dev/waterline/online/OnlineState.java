package dev.waterline.online;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.stereotype.Component;

/**
 * What presence keeps in Redis, in both modes: per user what was last announced and when the user
 * was last seen leaving ({@code wl:online:{user}}), the users whose settle is due
 * ({@code wl:online:due}) and the users announced online ({@code wl:online:on}). The decisions are
 * the scripts' ({@code online/*.lua}), at Redis's clock, so that every node decides alike.
 */
@Component
class OnlineState {

    static final String DUE = "wl:online:due";
    static final String ON = "wl:online:on";
    private static final int CHUNK = 500;

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> SETTLE = RedisScript.of(lua("settle"), List.class);
    private static final RedisScript<Long> LEAVE = RedisScript.of(lua("leave"), Long.class);
    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> TAKE_DUE = RedisScript.of(lua("due"), List.class);
    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> SCAN_ON = RedisScript.of(lua("scan_on"), List.class);

    /** What settle decided: {@link #NONE}, {@link #LATER} (it is due again), or announce {@code state}. */
    record Settled(int outcome, String state, Long seenMillis) {
        static final int NONE = 0;
        static final int LATER = 1;
        static final int ANNOUNCE = 2;
        static final int STALE = 3;
    }

    /** What was last announced of a user: {@code state} (offline when never), {@code seenMillis} (null: none). */
    record Known(String state, Long seenMillis) {
    }

    private final StringRedisTemplate redis;
    private final String debounceMillis;
    private final String keepSeconds;
    private final String leaseMillis;

    OnlineState(StringRedisTemplate redis, OnlineProperties properties) {
        this.redis = redis;
        this.debounceMillis = Long.toString(properties.debounce().toMillis());
        this.keepSeconds = Long.toString(Math.max(1, properties.keepLastSeen().toSeconds()));
        this.leaseMillis = Long.toString(properties.dueLease().toMillis());
    }

    static String key(String user) {
        return "wl:online:{" + user + "}";
    }

    /**
     * Settles {@code user}, whose actual state is {@code online} or not ({@code settle.lua}), as read
     * under {@code version} ({@link #versions}; null: a reading that cannot be stale).
     */
    Settled settle(String user, boolean online, String version) {
        List<?> r = redis.execute(SETTLE, List.of(key(user), DUE, ON), user, online ? "online" : "offline",
                debounceMillis, keepSeconds, version == null ? "" : version);
        int outcome = ((Number) r.getFirst()).intValue();
        if (outcome != Settled.ANNOUNCE) {
            return new Settled(outcome, null, null);
        }
        String seen = String.valueOf(r.get(2));
        return new Settled(outcome, String.valueOf(r.get(1)), seen.isEmpty() ? null : Long.valueOf(seen));
    }

    /** {@code users} were seen leaving now: each is settled a debounce later, by any node ({@code leave.lua}). */
    void leave(Collection<String> users) {
        leave(users, "");
    }

    /** Of {@code users}, those with no settle due are stamped as leaving now ({@code leave.lua}'s audit); returns how many. */
    long leaveUnlessDue(Collection<String> users) {
        return leave(users, "audit");
    }

    private long leave(Collection<String> users, String mode) {
        long stamped = 0;
        List<String> all = List.copyOf(users);
        for (int from = 0; from < all.size(); from += CHUNK) {
            List<String> chunk = all.subList(from, Math.min(all.size(), from + CHUNK));
            List<String> keys = new ArrayList<>(chunk.size() + 1);
            keys.add(DUE);
            chunk.forEach(u -> keys.add(key(u)));
            List<String> args = new ArrayList<>(chunk.size() + 3);
            args.add(debounceMillis);
            args.add(keepSeconds);
            args.add(mode);
            args.addAll(chunk);
            Long n = redis.execute(LEAVE, keys, args.toArray());
            stamped += n == null ? 0 : n;
        }
        return stamped;
    }

    /** Each user's version now (their {@code v}; "0" when none), in one round trip. */
    List<String> versions(List<String> users) {
        List<Object> v = redis.executePipelined((org.springframework.data.redis.core.RedisCallback<Object>) c -> {
            for (String u : users) {
                c.hashCommands().hGet(key(u).getBytes(StandardCharsets.UTF_8), "v".getBytes(StandardCharsets.UTF_8));
            }
            return null;
        });
        List<String> out = new ArrayList<>(users.size());
        v.forEach(x -> out.add(x == null ? "0" : x.toString()));
        return out;
    }

    /** A page of the users announced online, from {@code cursor} (SSCAN); the next cursor is 0 at the end. */
    record Page(List<String> users, long next) {
    }

    /** One SSCAN step over the users announced online ({@code scan_on.lua}). */
    Page announcedOnline(long cursor, int count) {
        List<?> r = redis.execute(SCAN_ON, List.of(ON), Long.toString(cursor), Integer.toString(count));
        List<String> users = new ArrayList<>();
        ((List<?>) r.get(1)).forEach(u -> users.add(String.valueOf(u)));
        return new Page(users, Long.parseLong(String.valueOf(r.get(0))));
    }

    /** Up to {@code max} users whose settle is due, leased to this node ({@code due.lua}). */
    List<String> takeDue(int max) {
        List<?> r = redis.execute(TAKE_DUE, List.of(DUE), Integer.toString(max), leaseMillis);
        List<String> users = new ArrayList<>(r.size());
        r.forEach(u -> users.add(String.valueOf(u)));
        return users;
    }

    Known read(String user) {
        List<Object> v = redis.opsForHash().multiGet(key(user), List.of("state", "seen"));
        String state = v.get(0) == null ? "offline" : v.get(0).toString();
        Long seen = "offline".equals(state) && v.get(1) != null ? Long.valueOf(v.get(1).toString()) : null;
        return new Known(state, seen);
    }

    static String lua(String name) {
        try (var in = new ClassPathResource("online/" + name + ".lua").getInputStream()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        catch (IOException e) {
            throw new UncheckedIOException("missing presence script " + name, e);
        }
    }
}
