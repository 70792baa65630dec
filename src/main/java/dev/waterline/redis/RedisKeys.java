package dev.waterline.redis;

/**
 * Redis keys shared by capabilities: written by one, read by another's scripts. A key only one
 * capability touches stays with it ({@code watermark.WatermarkIndex}'s per-user keys, presence's
 * channels, trust words and tombstones). Every Waterline key starts with {@value #PREFIX}. The
 * names are built at class initialisation rather than written as constants, so that the
 * compiler does not copy them into their readers: a capability that reads one depends on this
 * package, as {@code architecture.ModularityUnitTests} sees it.
 */
public final class RedisKeys {

    /** What every Waterline key starts with. */
    public static final String PREFIX = "wl:";

    /** The live nodes and their last heartbeats, at Redis's clock (written by presence, read by the index's scripts that must know a node is alive). */
    public static final String NODES = key("nodes");

    /** The watermark index's generation (started by the reclaim leader, read by presence's heartbeat to renew its trust). */
    public static final String GENERATION = key("gen");

    private RedisKeys() {
    }

    private static String key(String name) {
        return PREFIX + name;
    }
}
