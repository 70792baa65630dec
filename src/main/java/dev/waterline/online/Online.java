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
 * due users ({@link OnlineState#takeDue}), reads their versions, then where they are (connected
 * here, on another node by {@link Presence#elsewhere}, or nowhere), and settles each under its
 * version: a leave or deferral stamped after the version was read makes that settle change
 * nothing, so a stale reading never undoes a newer one. A node that stops or dies has its users
 * withdrawn by the others ({@link UsersWithdrawn}), which stamps them as leaving; a single node
 * that starts stamps every user announced online (its connections are gone); every
 * {@code audit-every} a page of the users announced online is checked, and those connected
 * nowhere with nothing due are stamped (a backstop for a stamp that was never made).
 *
 * <p><b>Announcing.</b> A pass's changes are broadcast to every node ({@link NodeBus#broadcast}) in
 * one message, even when the pass fails after Redis recorded them. Each node pushes {@code presence}
 * frames to the users it holds who share a chat with the announced one: one query for the
 * announced users' chats ({@code chat_members_by_user}) and one for which of them hide their
 * presence, intersected with {@link LocalMembers} (the chats of the users connected here, read
 * once per connection). So an announcement costs each node one index range of the user's
 * memberships and one frame per connected co-member; nobody who is not connected is looked at or
 * written to.
 *
 * <p>Everything is best effort: a failed settle pass is counted and its notes tried again in the
 * next; an announcement a node could not take (its inbox full) or fan out is dropped and counted;
 * the query answers from Redis whatever was last announced.
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
    private final Counter audited;
    private long nextDue = System.nanoTime();
    private long nextAudit = System.nanoTime();
    private long auditCursor;
    private boolean restarted;
    private volatile int localUsers;
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
        this.audited = metrics.counter("waterline.presence.audited",
                "users the audit found announced online, connected nowhere, with nothing due, and stamped as leaving");
        metrics.gauge("waterline.presence.local.users", "connected users whose chats this node keeps for presence", () -> localUsers);
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
            // the audit finds them (announced online, connected nowhere, nothing due)
            failed.increment(e.users().size());
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
            failed.increment();
            loops.failed(LOOP, "a join to chat " + e.chatId() + " not told to the nodes", x);
        }
    }

    /**
     * {@code user} set their presence hidden or shown: every node pushes offline without a last
     * seen (hidden), or what is announced of them (shown), even while the setting hides them.
     * Best effort: a failure is counted and logged, the setting stands.
     */
    void settingChanged(String user, boolean hidden) {
        if (!properties.enabled()) {
            return;
        }
        try {
            PresenceWire.Announced a;
            if (hidden) {
                a = new PresenceWire.Announced(user, "offline", null, true);
            }
            else {
                OnlineState.Known k = state.read(user);
                a = new PresenceWire.Announced(user, k.state(), k.seenMillis(), true);
            }
            bus.broadcast(PresenceWire.announced(List.of(a)));
        }
        catch (RuntimeException x) {
            failed.increment();
            loops.failed(LOOP, "the presence setting of " + user + " not announced", x);
        }
    }

    private void step() throws InterruptedException {
        String first = inbox.poll(properties.linger().toMillis(), TimeUnit.MILLISECONDS);
        if (first != null) {
            batch.add(first);
            inbox.drainTo(batch, properties.batchSize() - 1);
        }
        try {
            if (!batch.isEmpty()) {
                fanOut(batch);
            }
        }
        catch (RuntimeException e) {
            // counted in fanOut; logged here, and the settles below still run at the loop's pace
            loops.failed(LOOP, "a fan-out of presence announcements dropped", e);
        }
        finally {
            batch.clear();
        }
        RuntimeException failure = null;
        try {
            if (!restarted) {
                restarted = takeEveryoneOffline();
            }
            settleChanged();
            long now = System.nanoTime();
            if (now - nextDue >= 0) {
                nextDue = now + properties.duePoll().toNanos();
                settleDue();
            }
            if (now - nextAudit >= 0) {
                nextAudit = now + properties.auditEvery().toNanos();
                audit();
            }
        }
        catch (RuntimeException e) {
            failure = e;
        }
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * A single node that starts holds no connection: every user announced online was connected to
     * the process before it, and is stamped as leaving (a page at a time, until done). In the
     * cluster the others withdraw a node's users as it leaves or dies. True when done.
     */
    private boolean takeEveryoneOffline() {
        if (presence.othersMayHold()) {
            return true;
        }
        long cursor = 0;
        do {
            OnlineState.Page page = state.announcedOnline(cursor, properties.batchSize());
            List<String> gone = page.users().stream().filter(u -> sessions.get(u) == null).toList();
            if (!gone.isEmpty()) {
                state.leave(gone);
            }
            cursor = page.next();
        } while (cursor != 0);
        return true;
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
        List<PresenceWire.Announced> announce = new ArrayList<>();
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
                leaving.forEach(taken::remove);
            }
            // settled first (Redis only), then their chats read for the fan-out: a PostgreSQL
            // outage delays only who hears of others here, never this user's own announcement
            List<String> unknown = here.stream().filter(u -> !local.holds(u)).toList();
            for (String user : here) {
                settle(user, true, null, announce);
                if (local.holds(user)) {
                    taken.remove(user);
                }
            }
            if (!unknown.isEmpty()) {
                Map<String, List<String>> chats = repository.chatsOf(unknown);
                unknown.forEach(u -> local.put(u, chats.getOrDefault(u, List.of())));
                unknown.forEach(taken::remove);
            }
        }
        catch (RuntimeException e) {
            taken.forEach((user, left) -> changed.merge(user, left, Boolean::logicalOr));   // tried again next pass
            throw e;
        }
        finally {
            localUsers = local.users();
            announce(announce);   // what Redis recorded as announced goes out, whatever failed after it
        }
    }

    /**
     * The users whose settle any node deferred, now due: each user's version is read, then where
     * it is (here, on another node, nowhere), then it is settled under that version (a leave or a
     * deferral stamped after the version was read makes the settle change nothing).
     */
    private void settleDue() {
        List<String> due = state.takeDue(properties.batchSize());
        if (due.isEmpty()) {
            return;
        }
        List<String> versions = state.versions(due);
        Set<String> online = whereAbouts(due);
        List<PresenceWire.Announced> announce = new ArrayList<>();
        try {
            for (int i = 0; i < due.size(); i++) {
                settle(due.get(i), online.contains(due.get(i)), versions.get(i), announce);
            }
        }
        finally {
            announce(announce);
        }
    }

    /** Of {@code users}, those connected here or on another node. */
    private Set<String> whereAbouts(List<String> users) {
        Set<String> online = new LinkedHashSet<>();
        List<String> notHere = new ArrayList<>();
        for (String user : users) {
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
        return online;
    }

    /**
     * A backstop: one page of the users announced online (SSCAN, going on where the last audit
     * stopped); those connected nowhere with no settle due are stamped as leaving. Finds a leave no
     * node stamped (a node that died between a close and its stamp, a withdrawal that failed).
     */
    private void audit() {
        OnlineState.Page page = state.announcedOnline(auditCursor, properties.batchSize());
        if (!page.users().isEmpty()) {
            Set<String> online = whereAbouts(page.users());
            List<String> nowhere = page.users().stream().filter(u -> !online.contains(u)).toList();
            if (!nowhere.isEmpty()) {
                audited.increment(state.leaveUnlessDue(nowhere));
            }
        }
        auditCursor = page.next();   // only once the page is done: a failed one is looked at again
    }

    private void settle(String user, boolean online, String version, List<PresenceWire.Announced> announce) {
        OnlineState.Settled s = state.settle(user, online, version);
        settled.increment();
        if (s.outcome() == OnlineState.Settled.ANNOUNCE) {
            announce.add(new PresenceWire.Announced(user, s.state(), s.seenMillis(), false));
            ("online".equals(s.state()) ? announcedOnline : announcedOffline).increment();
        }
    }

    /** Broadcasts a pass's changes to every node, in one message. */
    private void announce(List<PresenceWire.Announced> announce) {
        if (announce.isEmpty()) {
            return;
        }
        try {
            bus.broadcast(PresenceWire.announced(announce));
        }
        catch (RuntimeException e) {
            failed.increment(announce.size());
            loops.failed(LOOP, announce.size() + " presence changes not announced to the nodes", e);
        }
    }

    /**
     * Broadcasts from the nodes: joins are noted first, then the announcements (the latest per user;
     * not those of a user who hides their presence, unless the setting made them) are pushed to the
     * co-members held here. A message that cannot be read is dropped and counted alone.
     */
    void fanOut(List<String> messages) {
        List<PresenceWire.Announced> all = new ArrayList<>();
        for (String m : messages) {
            PresenceWire.Message message;
            try {
                message = PresenceWire.read(m);
            }
            catch (RuntimeException e) {
                failed.increment();
                loops.failed(LOOP, "a presence broadcast could not be read", e);
                continue;
            }
            if (message.chat() != null) {
                local.joined(message.chat(), message.joined());
            }
            all.addAll(message.announced());
        }
        if (all.isEmpty() || local.users() == 0) {
            return;
        }
        Map<String, List<String>> chats;
        Set<String> hidden;
        try {
            List<String> notSettings = all.stream().filter(a -> !a.setting()).map(PresenceWire.Announced::user).distinct().toList();
            hidden = notSettings.isEmpty() ? Set.of() : repository.hiddenAmong(notSettings);
            chats = repository.chatsOf(all.stream().map(PresenceWire.Announced::user).collect(java.util.stream.Collectors.toSet()));
        }
        catch (RuntimeException e) {
            failed.increment(all.size());
            throw e;
        }
        // the latest per user, a hidden user's own changes dropped first: one of them must never
        // replace the setting's announcement that came before it in the same batch
        Map<String, PresenceWire.Announced> latest = new LinkedHashMap<>();
        for (PresenceWire.Announced a : all) {
            if (a.setting() || !hidden.contains(a.user())) {
                latest.put(a.user(), a);
            }
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

    @Override
    public void start() {
        running = true;
        if (!properties.enabled()) {
            return;
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
        return localUsers;
    }

    Collection<String> pendingChanges() {
        return changed.keySet();
    }
}
