package dev.waterline.watermark;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

import dev.waterline.session.ClientSession;

/**
 * The index of live delivery, as the rest of Waterline sees it: per user its epoch (the one
 * connection that receives live delivery, and the node that holds it), the delivery ids written to
 * it and not acked (pending) or owed to it and not written yet, and the pins whose minimum is the
 * safe-delete line; and whether the index is known to be whole (the marker and generation). A
 * port: Redis, through the Lua scripts under {@code resources/watermark/}, is the adapter
 * ({@code watermark.redis}); its key names are {@link WatermarkKeys}.
 *
 * <p>Every call that acts for a connection names it: a call made for a connection that is no
 * longer its user's registered epoch changes nothing.
 */
public interface WatermarkIndex {


    /** {@link #deliver} and {@link #owe} per group: the connection is no longer its user's epoch (nothing was recorded). */
    long NOT_THE_EPOCH = -1;

    /** Where a user's epoch is: the node that holds it and the connection's session id. */
    record SessionLocation(String node, String sessionId) {
    }

    /** Delivery ids for one connection, as one group of a batched call. */
    record Group(String userId, String sessionId, long[] ids, ClientSession session) {

        /** A group for a connection of this node. */
        public static Group of(ClientSession session, long[] ids) {
            return new Group(session.userId(), session.sessionId(), ids, session);
        }

        /** A group for a connection on another node, known by user and session id only. */
        public static Group remote(String userId, String sessionId, long[] ids) {
            return new Group(userId, sessionId, ids, null);
        }
    }

    /** What {@link #reassert} and {@link #rebuildUser} did with a connection a node holds. */
    enum EpochClaim {
        /** The index names the connection now (it named another, or none, before: the single-node mode; or a rebuild). */
        NAMED,
        /** The index already named it; nothing changed. */
        ALREADY_NAMED,
        /** The cluster: another connection is the epoch (close it with 4009). */
        SUPERSEDED,
        /** The cluster: no connection is the epoch, or this node is not alive (close it with 1012). */
        GONE;

        /** Whether the connection must close (and leave the registry). */
        public boolean closes() {
            return this == SUPERSEDED || this == GONE;
        }
    }

    /** Where a row stands for a connection. */
    enum RowStatus {
        /** Neither pending nor owed: acked, or from before this connection (its row is being retired). */
        NEITHER,
        /** Owed: never written to the connection. */
        OWED,
        /** Pending: written, not acked. */
        PENDING
    }

    /** The index's word on a connection's rows ({@link #status}). */
    sealed interface Statuses {

        /** The index is not known to be whole: nothing may be concluded from a row's absence. */
        record Unknown() implements Statuses {
        }

        /** The connection is no longer its user's epoch. */
        record NotTheEpoch() implements Statuses {
        }

        /** Per id, in the order asked, where its row stands. */
        record Known(List<RowStatus> each) implements Statuses {

            public Known {
                each = List.copyOf(each);
            }
        }
    }

    /**
     * Makes {@code s}, on {@code node}, its user's epoch, dropping whatever an earlier connection
     * had pending; returns where the earlier epoch was (empty: there was none), so that it can be
     * closed there.
     */
    Optional<SessionLocation> connect(ClientSession s, String node);

    /** Removes {@code s} from live delivery if it is still its user's epoch; true when it was. Never an ack. */
    default boolean disconnect(ClientSession s) {
        return disconnect(s.userId(), s.sessionId());
    }

    /** {@link #disconnect(ClientSession)} by user and session id (the connection may be on another node). */
    boolean disconnect(String user, String sessionId);

    /**
     * Records {@code ids} as delivered-but-unacked for {@code s}. Returns the user's number of
     * pending ids, or {@link #NOT_THE_EPOCH} when {@code s} is no longer its user's epoch.
     */
    default long deliver(ClientSession s, long[] ids) {
        return deliver(List.of(Group.of(s, ids)))[0];
    }

    /** {@link #deliver(ClientSession, long[])} for many connections in one call: per group, in order. */
    long[] deliver(List<Group> groups);

    /**
     * Records {@code ids} as owed to {@code s} without writing them (shed by the fast path, or about
     * to be handed to the node that holds {@code s}): they hold the line down but do not count
     * against max-pending. False when {@code s} is no longer its user's epoch.
     */
    default boolean owe(ClientSession s, long[] ids) {
        return owe(List.of(Group.of(s, ids)))[0] >= 0;
    }

    /** {@link #owe(ClientSession, long[])} for many connections in one call: per group 1, or {@link #NOT_THE_EPOCH}. */
    long[] owe(List<Group> groups);

    /**
     * The single-node mode: names {@code s} as its user's epoch on {@code node} when the index names
     * another connection or none (Redis was down when it connected, or lost its data):
     * {@link EpochClaim#NAMED}, or {@link EpochClaim#ALREADY_NAMED}. Records made for {@code s}
     * meanwhile are kept. The cluster never re-names one (reassert.lua says why):
     * {@link EpochClaim#ALREADY_NAMED}, {@link EpochClaim#SUPERSEDED} or {@link EpochClaim#GONE}.
     */
    EpochClaim reassert(ClientSession s, String node, boolean cluster);

    /**
     * Per id its status for {@code s} (an id judged {@link RowStatus#NEITHER} also leaves the user's
     * acked set: its row is being retired), judged under PostgreSQL's marker {@code token} and the
     * {@code generation} the caller trusts (and, in the cluster, the leader's word that every node
     * trusts it).
     */
    Statuses status(String user, String sessionId, long token, long generation, boolean cluster, long[] ids);

    /** Acks {@code ids} for {@code s}; returns how many were pending. */
    default int ack(ClientSession s, long[] ids) {
        if (ids.length == 0) {
            return 0;
        }
        return (int) ack(List.of(Group.of(s, ids)))[0];
    }

    /** Acks for many connections in one call: per group, in order, how many were pending. */
    long[] ack(List<Group> groups);

    /**
     * Rebuild: names {@code s} as its user's epoch on {@code node} (the cluster: only if the index
     * still does), records {@code ids} as owed to it but those in the user's acked set, and drops
     * pending or owed ids up to {@code scannedUpTo} that are not among them.
     * {@link EpochClaim#NAMED}, or in the cluster {@link EpochClaim#SUPERSEDED} or
     * {@link EpochClaim#GONE} when the connection must close instead.
     */
    EpochClaim rebuildUser(ClientSession s, String node, boolean cluster, long scannedUpTo, long[] ids);

    /**
     * Rebuild: removes a user with no connection on the rebuilding node from live delivery, if the
     * index places its epoch on {@code node} ({@code null}: wherever it is, the single-node mode).
     */
    void forgetUser(String user, String node);

    /**
     * Withdraws up to {@code max} of the users whose epoch is on {@code node} (it left or died);
     * returns how many it took from the node's set (0: none left).
     */
    long withdrawNode(String node, int max);

    /** After a new generation: removes every pinned user whose epoch is on no live node; returns how many. */
    long forgetOrphans();

    /**
     * {@link #locate}, only while the index is known to be whole under PostgreSQL's marker
     * {@code token} and {@code generation} (and, in the cluster, the leader's word that every node
     * trusts it): empty otherwise. Then a user absent from the map is connected nowhere.
     */
    Optional<Map<String, SessionLocation>> locateIfWhole(Collection<String> users, long token, long generation, boolean cluster);

    /** The users whose epoch the index places on {@code node}. */
    Set<String> nodeUsers(String node);

    /** Where each of {@code users} has its epoch, for the users the index names both a node and a session of. */
    Map<String, SessionLocation> locate(Collection<String> users);

    /** The lowest pin over every user in live delivery, if any user holds one. */
    OptionalLong lowestPin();

    /** Users that hold a pin. */
    Set<String> pinnedUsers();

    /** Number of pending ids per user in live delivery. */
    Map<String, Long> pendingCounts();

    /** The marker token the index holds (empty: none). */
    OptionalLong marker();

    /** The generation the index holds (empty: none). */
    OptionalLong generation();

    /** Moves the marker from {@code expected} to {@code next}; false when the index held something else. */
    boolean rotateMarker(long expected, long next);

    /** A new generation (after PostgreSQL has it): marker and generation set, the leader's word and any request for it dropped. */
    void newGeneration(long token, long generation);

    /**
     * Drops every user's acked set (a rebuild then owes those rows again: repeats, never a skip).
     * For an index that is ahead of PostgreSQL, whose acked sets may name ids the database hands
     * out again. Returns how many sets were dropped.
     */
    long forgetAcked();

    /** A node asks the leader for a new generation (it may have missed a write). */
    void requestNewGeneration(String node);

    /** Whether some node has asked for a new generation. */
    boolean newGenerationRequested();

    /** The leader's word, for {@code ttl}, that every live node trusts the index under {@code generation}. */
    void allTrusted(long generation, Duration ttl);

    /** The leader takes its word back: some node does not trust the index. */
    void notAllTrusted();
}
