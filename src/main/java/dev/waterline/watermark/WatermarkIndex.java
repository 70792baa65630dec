package dev.waterline.watermark;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.waterline.session.ClientSession;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.stereotype.Component;

/**
 * Java face of the watermark scripts. Every call names the connection it acts for: a script run
 * for a connection that is no longer its user's registered epoch changes nothing.
 */
@Component
public class WatermarkIndex {

    /** Result of {@link #deliver}: whether the connection is still current, and a verdict per id. */
    public record Verdicts(boolean current, int[] perId) {
        public static final int ACKED = 0;
        public static final int FIRST = 1;
        public static final int AGAIN = 2;
    }

    static final String PINS = "wl:pins";
    static final String COUNTS = "wl:cnt";

    // Loaded once as text: a resource-backed script would stat its file on every call to see
    // whether it changed.
    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> DELIVER = RedisScript.of(lua("deliver"), List.class);
    private static final RedisScript<Long> ACK = RedisScript.of(lua("ack"), Long.class);
    private static final RedisScript<Long> CONNECT = RedisScript.of(lua("connect"), Long.class);
    private static final RedisScript<Long> DISCONNECT = RedisScript.of(lua("disconnect"), Long.class);
    private static final RedisScript<Long> FORGET_ACKED = RedisScript.of(lua("forget_acked"), Long.class);

    private final StringRedisTemplate redis;
    private final String ackedTtlSeconds;

    /**
     * @param ackedTtl the longest an acked mark may wait for the poller: the outbox's own
     *                 age backstop, past which its row is gone anyway
     */
    public WatermarkIndex(StringRedisTemplate redis, @Value("${waterline.retention.outbox:26h}") Duration ackedTtl) {
        this.redis = redis;
        this.ackedTtlSeconds = Long.toString(Math.max(1, ackedTtl.toSeconds()));
    }

    private static String lua(String name) {
        try (var in = new ClassPathResource("watermark/" + name + ".lua").getInputStream()) {
            return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
        catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException("missing watermark script " + name, e);
        }
    }

    static String sessionKey(String user) {
        return "wl:sess:" + user;
    }

    static String pendingKey(String user) {
        return "wl:pend:" + user;
    }

    static String ackedKey(String user) {
        return "wl:acked:" + user;
    }

    public void connect(ClientSession s) {
        String u = s.userId();
        redis.execute(CONNECT, List.of(sessionKey(u), pendingKey(u), COUNTS, PINS), s.sessionId(), u);
    }

    /** Returns true when the connection was its user's current epoch and has left the index. */
    public boolean disconnect(ClientSession s) {
        String u = s.userId();
        Long r = redis.execute(DISCONNECT, List.of(sessionKey(u), pendingKey(u), COUNTS, PINS), s.sessionId(), u);
        return r != null && r == 1L;
    }

    /** Records {@code ids} as delivered to {@code s} (before the frames are written) and says which to write. */
    public Verdicts deliver(ClientSession s, long[] ids) {
        String u = s.userId();
        List<String> args = new ArrayList<>(ids.length + 2);
        args.add(s.sessionId());
        args.add(u);
        for (long id : ids) {
            args.add(Long.toString(id));
        }
        List<?> out = redis.execute(DELIVER, List.of(sessionKey(u), pendingKey(u), ackedKey(u), COUNTS, PINS), args.toArray());
        if (out == null || out.isEmpty() || ((Number) out.get(0)).intValue() < 0) {
            return new Verdicts(false, new int[0]);
        }
        int[] perId = new int[out.size()];
        for (int i = 0; i < perId.length; i++) {
            perId[i] = ((Number) out.get(i)).intValue();
        }
        return new Verdicts(true, perId);
    }

    /** Acks {@code ids} for {@code s}; returns how many were pending. */
    public int ack(ClientSession s, long[] ids) {
        if (ids.length == 0) {
            return 0;
        }
        String u = s.userId();
        List<String> args = new ArrayList<>(ids.length + 3);
        args.add(s.sessionId());
        args.add(u);
        args.add(ackedTtlSeconds);
        for (long id : ids) {
            args.add(Long.toString(id));
        }
        Long n = redis.execute(ACK, List.of(sessionKey(u), pendingKey(u), ackedKey(u), COUNTS, PINS), args.toArray());
        return n == null ? 0 : n.intValue();
    }

    /** Drops acked marks of rows retired while their recipient was offline. */
    public void forgetAcked(String user, long[] ids) {
        if (ids.length == 0) {
            return;
        }
        Object[] args = new Object[ids.length];
        for (int i = 0; i < ids.length; i++) {
            args[i] = Long.toString(ids[i]);
        }
        redis.execute(FORGET_ACKED, List.of(ackedKey(user)), args);
    }
}
