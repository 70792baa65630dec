package dev.waterline.watermark;

import dev.waterline.redis.RedisKeys;

/**
 * The Redis key names of the watermark index, for the Redis adapters that share them (presence's
 * scripts read {@link #NODES} and {@link #GENERATION}) and for tests that look at Redis directly.
 * The index itself is the {@link WatermarkIndex} port; only its Redis adapter writes these keys.
 *
 * <p>Per user {@code wl:sess:{user}} (the epoch: a session id), {@code wl:node:{user}} (the node
 * that holds it), {@code wl:pend:{user}} and {@code wl:shed:{user}} (pending and owed delivery
 * ids), {@code wl:ackd:{user}} (acked ids whose rows the poller has not judged yet), the user id a
 * hash tag so that one user's keys share a Redis Cluster slot; and global {@code wl:cnt} (pending
 * counts), {@code wl:pins} (the pins), {@code wl:marker}, {@code wl:gen}, {@code wl:alltrusted},
 * {@code wl:rebuild}, {@code wl:nodes} and {@code wl:users:<node>} (each node's users). Every
 * script names each key it touches in its KEYS (src/main/resources/watermark/*.lua).
 */
public final class WatermarkKeys {

    public static final String PINS = "wl:pins";
    public static final String COUNTS = "wl:cnt";
    public static final String MARKER = "wl:marker";
    public static final String GENERATION = RedisKeys.GENERATION;
    public static final String ALL_TRUSTED = "wl:alltrusted";
    public static final String REBUILD = "wl:rebuild";
    /** The live nodes and their last heartbeats (written by presence, read by the scripts that must know a node is alive). */
    public static final String NODES = RedisKeys.NODES;
    /** The pattern of every user's acked set (for a scan). */
    public static final String ACKED_PATTERN = "wl:ackd:*";

    private WatermarkKeys() {
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
}
