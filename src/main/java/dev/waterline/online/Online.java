package dev.waterline.online;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import dev.waterline.chat.MembersJoined;
import dev.waterline.lifecycle.Loops;
import dev.waterline.lifecycle.Workers;
import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.presence.NodeBus;
import dev.waterline.presence.Presence;
import dev.waterline.presence.UsersWithdrawn;
import dev.waterline.session.ClientSession;
import dev.waterline.session.Frames;
import dev.waterline.session.SessionRegistry;
import io.micrometer.core.instrument.Counter;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/**
 * Presence (PROTOCOL.md §10): who is online, announced to the connected users who share a chat
 * with them. Design note: docs/ARCHITECTURE.md "Presence".
 *
 * <p><b>Settling</b> (one loop of {@link Loops} per node). The session registry tells this node of
 * every connection registered or removed here ({@link SessionRegistry.Listener}: noted in a map,
 * never waited on). Each pass: a user who left is stamped in Redis ({@link OnlineState#leave}) and
 * settled a debounce later by whichever node finds it due; a user connected here is settled now
 * ({@link OnlineState#settle}, against what was last announced: online is announced at once unless
 * the last announcement is younger than the debounce). Every {@code due-poll} the node takes the
 * due users ({@link OnlineState#takeDue}) and settles each against where it is: connected here,
 * connected on another node ({@link Presence#elsewhere}), or nowhere. A node that stops or dies
 * has its users withdrawn by the others ({@link UsersWithdrawn}), which stamps them as leaving; a
 * single node that restarts stamps every user announced online (its connections are gone).
 *
 * <p><b>Announcing.</b> A change to announce, of a user who does not hide their presence, is
 * broadcast to every node ({@link NodeBus#broadcast}), a pass's changes in one message. Each node
 * pushes {@code presence} frames to the users it holds who share a chat with the announced one:
 * one query for the announced users' chats ({@code chat_members_by_user}), intersected with
 * {@link LocalMembers} (the chats of the users connected here, read once per connection). So the
 * cost of an announcement is one index range per announced user per node and one frame per
 * connected co-member; nobody who is not connected is looked at or written to.
 *
 * <p>Everything is best effort: a failed pass is counted and its changes tried again in the next;
 * an announcement a node could not take (its inbox full) is dropped and counted; the query answers
 * from Redis whatever was last announced.
 */
@Component
public class Online implements SmartLifecycle {

    static final String LOOP = "presence";

    private final OnlineProperties properties;
    private final OnlineState state;
    private final OnlineRepository repository;
    private final SessionRegistry sessions;
    private final Presence presence;
    private final NodeBus bus;
    private final Loops loops;
    private final Map<String, Boolean> changed = new ConcurrentHashMap<>();   // user → left (at least once)
    private final BlockingQueue<String> inbox;
    private final LocalMembers local = new LocalMembers();
    private final List<String> batch = new ArrayList<>();
    private final Counter settled;
    private final Counter announcedOnline;
    private final Counter announcedOffline;
    private final Counter pushed;
    private final Counter droppedInbox;
    private final Counter droppedBacklog;
    private final Counter failed;
    private long nextDue;
    private volatile boolean running;
    private Thread thread;

    Online(OnlineProperties properties, OnlineState state, OnlineRepository repository, SessionRegistry sessions,
           Presence presence, NodeBus bus, Loops loops, WaterlineMetrics metrics) {
        this.properties = properties;
        this.state = state;
        this.repository = repository;
        this.sessions = sessions;
        this.presence = presence;
        this.bus = bus;
        this.loops = loops;
        this.inbox = new ArrayBlockingQueue<>(properties.inboxSize());
        this.settled = metrics.counter("waterline.presence.settled", "users whose presence was settled against what was last announced");
        this.announcedOnline = metrics.counter("waterline.presence.announced", "presence changes announced to every node", "state", "online");
        this.announcedOffline = metrics.counter("waterline.presence.announced", "presence changes announced to every node", "state", "offline");
        this.pushed = metrics.counter("waterline.presence.pushed", "presence frames pushed to connected co-members on this node");
        this.droppedInbox = metrics.counter("waterline.presence.dropped", "presence announcements or pushes dropped", "reason", "inbox");
        this.droppedBacklog = metrics.counter("waterline.presence.dropped", "presence announcements or pushes dropped", "reason", "backlog");
        this.failed = metrics.counter("waterline.presence.dropped", "presence announcements or pushes dropped", "reason", "unavailable");
        metrics.gauge("waterline.presence.local.users", "connected users whose chats this node keeps for presence", local::users);
        loops.declare(LOOP);
        if (properties.enabled()) {
            sessions.listen((user, left) -> changed.merge(user, left, Boolean::logicalOr));
            bus.onBroadcast(m -> {
                if (!inbox.offer(m)) {
                    droppedInbox.increment();
                }
            });
        }
    }

    /** Another node, or this one, withdrew the users of a node that left: they are leaving. */
    @EventListener
    void withdrawn(UsersWithdrawn e) {
        if (!properties.enabled()) {
            return;
        }
        try {
            state.leave(e.users());
        }
        catch (RuntimeException x) {
            loops.failed(LOOP, e.users().size() + " withdrawn users of node " + e.node() + " not stamped as leaving", x);
        }
    }

    /** Users joined a chat: every node holding one of them learns of it. */
    @EventListener
    void joined(MembersJoined e) {
        if (!properties.enabled()) {
            return;
        }
        try {
            bus.broadcast(PresenceWire.joined(e.chatId(), e.users()));
        }
        catch (RuntimeException x) {
            loops.failed(LOOP, "a join to chat " + e.chatId() + " not told to the nodes", x);
        }
    }

    /**
     * {@code user} hid or showed their presence: every node pushes offline without a last seen
     * (hidden), or what was last announced (shown).
     */
    void settingChanged(String user, boolean hidden) {
        if (!properties.enabled()) {
            return;
        }
        PresenceWire.Announced a;
        if (hidden) {
            a = new PresenceWire.Announced(user, "offline", null);
        }
        else {
            OnlineState.Known k = state.read(user);
            a = new PresenceWire.Announced(user, k.state(), k.seenMillis());
        }
        bus.broadcast(PresenceWire.announced(List.of(a)));
    }

    private void step() throws InterruptedException {
        String first = inbox.poll(properties.linger().toMillis(), TimeUnit.MILLISECONDS);
        if (first != null) {
            batch.add(first);
            inbox.drainTo(batch, properties.batchSize() - 1);
        }
        try {
            settleChanged();
            if (System.nanoTime() - nextDue >= 0) {
                nextDue = System.nanoTime() + properties.duePoll().toNanos();
                settleDue();
            }
            if (!batch.isEmpty()) {
                fanOut(batch);
            }
        }
        finally {
            batch.clear();
        }
    }

    /** The connections registered or removed here since the last pass. */
    private void settleChanged() {
        if (changed.isEmpty()) {
            return;
        }
        Map<String, Boolean> taken = new LinkedHashMap<>();
        for (String user : changed.keySet()) {
            if (taken.size() >= properties.batchSize()) {
                break;
            }
            Boolean left = changed.remove(user);
            if (left != null) {
                taken.put(user, left);
            }
        }
        try {
            List<String> here = new ArrayList<>();
            List<String> leaving = new ArrayList<>();
            taken.forEach((user, left) -> {
                if (sessions.get(user) != null) {
                    here.add(user);
                }
                else {
                    local.remove(user);
                    if (left) {
                        leaving.add(user);
                    }
                }
            });
            if (!leaving.isEmpty()) {
                state.leave(leaving);
            }
            if (!here.isEmpty()) {
                List<String> unknown = here.stream().filter(u -> !local.holds(u)).toList();
                if (!unknown.isEmpty()) {
                    Map<String, List<String>> chats = repository.chatsOf(unknown);
                    unknown.forEach(u -> local.put(u, chats.getOrDefault(u, List.of())));
                }
                List<PresenceWire.Announced> announce = new ArrayList<>();
                for (String user : here) {
                    settle(user, true, announce);
                }
                announce(announce);
            }
        }
        catch (RuntimeException e) {
            taken.forEach((user, left) -> changed.merge(user, left, Boolean::logicalOr));   // tried again next pass
            throw e;
        }
    }

    /** The users whose settle any node deferred, now due: settled against where they are. */
    private void settleDue() {
        List<String> due = state.takeDue(properties.batchSize());
        if (due.isEmpty()) {
            return;
        }
        Set<String> online = new LinkedHashSet<>();
        List<String> notHere = new ArrayList<>();
        for (String user : due) {
            if (sessions.get(user) != null) {
                online.add(user);
            }
            else {
                notHere.add(user);
            }
        }
        if (!notHere.isEmpty() && presence.othersMayHold()) {
            online.addAll(presence.elsewhere(notHere).keySet());
        }
        List<PresenceWire.Announced> announce = new ArrayList<>();
        for (String user : due) {
            settle(user, online.contains(user), announce);
        }
        announce(announce);
    }

    private void settle(String user, boolean online, List<PresenceWire.Announced> announce) {
        OnlineState.Settled s = state.settle(user, online);
        settled.increment();
        if (s.outcome() == OnlineState.Settled.ANNOUNCE) {
            announce.add(new PresenceWire.Announced(user, s.state(), s.seenMillis()));
            ("online".equals(s.state()) ? announcedOnline : announcedOffline).increment();
        }
    }

    /** Broadcasts the changes of users who do not hide their presence. */
    private void announce(List<PresenceWire.Announced> announce) {
        if (announce.isEmpty()) {
            return;
        }
        Set<String> hidden = repository.hiddenAmong(announce.stream().map(PresenceWire.Announced::user).toList());
        List<PresenceWire.Announced> shown = announce.stream().filter(a -> !hidden.contains(a.user())).toList();
        if (!shown.isEmpty()) {
            bus.broadcast(PresenceWire.announced(shown));
        }
    }

    /** Broadcasts from the nodes: joins are noted, announcements pushed to the co-members held here. */
    void fanOut(List<String> messages) {
        Map<String, PresenceWire.Announced> latest = new LinkedHashMap<>();
        for (String m : messages) {
            PresenceWire.Message message = PresenceWire.read(m);
            if (message.chat() != null) {
                local.joined(message.chat(), message.joined());
            }
            message.announced().forEach(a -> latest.put(a.user(), a));
        }
        if (latest.isEmpty() || local.users() == 0) {
            return;
        }
        Map<String, List<String>> chats;
        try {
            chats = repository.chatsOf(latest.keySet());
        }
        catch (RuntimeException e) {
            failed.increment(latest.size());
            throw e;
        }
        for (PresenceWire.Announced a : latest.values()) {
            Set<String> to = new LinkedHashSet<>();
            for (String chat : chats.getOrDefault(a.user(), List.of())) {
                to.addAll(local.in(chat));
            }
            to.remove(a.user());
            if (to.isEmpty()) {
                continue;
            }
            String frame = Frames.presence(a.user(), a.state(),
                    a.seenMillis() == null ? null : Instant.ofEpochMilli(a.seenMillis()).toString());
            for (String user : to) {
                ClientSession s = sessions.get(user);
                if (s == null) {
                    continue;
                }
                if (s.queuedChars() >= properties.shedAtBacklogChars()) {
                    droppedBacklog.increment();
                }
                else if (s.send(frame)) {
                    pushed.increment();
                }
                else {
                    failed.increment();
                }
            }
        }
    }

    /**
     * Starts the loop. A single node that starts holds no connection, so every user announced
     * online was connected to the process before it: each is stamped as leaving (in the cluster
     * the others withdraw a node's users as it leaves or dies).
     */
    @Override
    public void start() {
        running = true;
        if (!properties.enabled()) {
            return;
        }
        if (!presence.othersMayHold()) {
            loops.pass(LOOP, () -> {
                Set<String> before = new LinkedHashSet<>(state.announcedOnline());
                before.removeIf(u -> sessions.get(u) != null);
                state.leave(before);
            });
        }
        thread = loops.start(LOOP, "presence", () -> running, this::step);
    }

    @Override
    public void stop() {
        running = false;
        if (thread != null) {
            Workers.stop(thread, Duration.ofSeconds(2));
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Starts after presence joined the cluster and the bus listens; stops before they leave. */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 200;
    }

    /** The users this node holds for presence (for tests). */
    int localUsers() {
        return local.users();
    }

    Collection<String> pendingChanges() {
        return changed.keySet();
    }
}
