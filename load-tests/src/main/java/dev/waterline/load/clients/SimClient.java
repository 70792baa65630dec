package dev.waterline.load.clients;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import dev.waterline.load.chat.LoadRun;
import dev.waterline.load.run.Stats;
import tools.jackson.core.io.JsonStringEncoder;
import tools.jackson.databind.JsonNode;

/**
 * One simulated client following PROTOCOL.md's client contract: it acks what it receives
 * (unless its {@link Behaviour} says otherwise), and on every (re)connect pages each of its
 * chats' history {@code since=} the last message up to which it holds everything, deduping by
 * messageId. Sends that were written but never answered are sent again, with the same
 * correlationId, after a reconnect.
 *
 * <p>One virtual thread per client owns the connection (connect, resync, resends, pings, and
 * every write of the jdk transport); a transport that can queue a frame without waiting (netty)
 * takes new sends straight from the offering thread and acks from its event loop, so that the
 * writer is not woken per frame.
 */
public final class SimClient {

    /** What the client knows of one chat: the messageIds by seq, and up to which seq it holds all. */
    public static final class Cursor {
        final TreeMap<Long, String> bySeq = new TreeMap<>();
        long contiguous;

        /** Keeps the entry at {@code contiguous} (for {@link #since}) and those above it; drops each below as it is passed. */
        synchronized void add(long seq, String messageId) {
            if (seq < contiguous) {
                return;
            }
            bySeq.put(seq, messageId);
            while (bySeq.containsKey(contiguous + 1)) {
                bySeq.remove(contiguous);
                contiguous++;
            }
        }

        synchronized String since() {
            return contiguous == 0 ? null : bySeq.get(contiguous);
        }
    }

    record Pending(String chatId, String frame, long firstSentNanos, EntrySpec entry) {
    }

    /** Which kind of entry the run asks a client for (PROTOCOL.md §9). */
    public enum EntryKind { EDIT, DELETE, REACT }

    /** An edit, delete or react this client made: what reconciliation needs of it once it is accepted. */
    public record EntrySpec(EntryKind kind, String targetId, String body, String emoji, boolean on) {
    }

    /** The emoji the simulated clients react with. */
    static final List<String> EMOJI = List.of("\uD83D\uDC4D", "\uD83C\uDF89", "\u2764\uFE0F", "\uD83D\uDE02");

    /**
     * The last {@value #CAP} text messages of one chat a client may edit, delete or react to,
     * written by the transport's threads and read by the offering thread.
     */
    static final class Targets {
        static final int CAP = 64;
        private final ArrayList<String> ids = new ArrayList<>(CAP);

        synchronized void add(String messageId) {
            if (ids.size() == CAP) {
                ids.removeFirst();
            }
            ids.add(messageId);
        }

        /** One of them at random, or null when there is none. */
        synchronized String pick(java.util.Random random) {
            return ids.isEmpty() ? null : ids.get(random.nextInt(ids.size()));
        }

        /** Takes one out (a message being deleted). */
        synchronized void remove(String messageId) {
            ids.remove(messageId);
        }

        synchronized int size() {
            return ids.size();
        }
    }

    public final String userId;
    public final Behaviour behaviour;
    public final List<String> chats = new ArrayList<>();
    public final Map<String, Cursor> cursors = new ConcurrentHashMap<>();
    public final Set<String> held = ConcurrentHashMap.newKeySet();
    public final Map<String, Integer> receivedCounts = new ConcurrentHashMap<>();
    /** {@code message} frames this client received live, by messageId. */
    public final Map<String, Integer> liveCounts = new ConcurrentHashMap<>();
    /** By chat: this client's own accepted text messages (what it may edit or delete) and others' it received (what it reacts to). */
    private final Map<String, Targets> ownTexts = new ConcurrentHashMap<>();
    private final Map<String, Targets> othersTexts = new ConcurrentHashMap<>();
    /** Whether this client's last react of each (message, emoji) put it on, as it asked: the next one asks the opposite. */
    private final Map<String, Boolean> reactionOn = new ConcurrentHashMap<>();

    private final LoadRun run;
    private final String token;
    private final LinkedBlockingQueue<String> outbound = new LinkedBlockingQueue<>();
    /** When each send frame still waiting for its first write was offered (frames are unique). */
    private final Map<String, Long> offeredAt = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<Long> acks = new ConcurrentLinkedQueue<>();
    /** Queued (once) behind pending sends when acks are waiting, so the writer sleeps until there is work. */
    private static final String ACK_SIGNAL = new String("ack");
    /** Queued to wake the writer at once (after a drop), carries nothing. */
    private static final String WAKE = new String("wake");
    /** When this client's connection was dropped by a reconnect storm; 0 when none is pending. */
    private volatile long stormFrom;
    /** When this client's node was killed under it; 0 when none is pending. */
    private volatile long killedFrom;
    /** The node this client connects to first ({@code index mod nodes}), and the one it is on now. */
    private final int home;
    private volatile int node;
    private final AtomicBoolean ackSignalled = new AtomicBoolean();
    private final Map<String, Pending> unanswered = new ConcurrentHashMap<>();
    private final AtomicLong sequence = new AtomicLong();
    private volatile WsLink link;
    /** The connection new sends may go to directly: set once welcomed and resynced, cleared on any drop. */
    private volatile WsLink live;
    /** Sends handed to the writer and not yet written (or failed) by it. */
    private final AtomicInteger queuedSends = new AtomicInteger();
    private volatile Events current;
    private boolean everConnected;
    private volatile boolean connected;
    private volatile boolean reading = true;
    private volatile long lastWriteNanos = System.nanoTime();
    private long nextDropNanos = Long.MAX_VALUE;
    private Thread writer;
    /** Until when this client makes no send after an {@code overloaded} (--overload-backoff); 0: none. */
    private volatile long backoffUntil;
    /** The next back-off's length: doubles while refusals continue, reset by an accepted. */
    private volatile long backoffNanos;

    public SimClient(LoadRun run, String userId, String token, Behaviour behaviour, int home) {
        this.home = home;
        this.node = home;
        this.run = run;
        this.userId = userId;
        this.token = token;
        this.behaviour = behaviour;
    }

    public boolean connected() {
        return connected;
    }

    public void start() {
        if (behaviour == Behaviour.RECONNECTING) {
            nextDropNanos = System.nanoTime() + (long) (Math.random() * run.reconnectEveryNanos()) + run.reconnectEveryNanos() / 2;
        }
        writer = Thread.ofVirtual().name("client-" + userId).start(this::writeLoop);
    }

    public void join() throws InterruptedException {
        writer.join(Duration.ofSeconds(30));
    }

    /**
     * Offers one send to a chat of this client; false when it is not connected right now. A send
     * that the run's window holds back (this client already awaits that many answers) is counted
     * and not made, and true is returned: it was not lost to a disconnection.
     */
    /**
     * As a person types before a send: a {@code typing} frame for the chat, at most one per chat
     * every {@link #TYPING_EVERY_NANOS} (the JavaScript client's throttle), only while connected
     * (never queued for a later connection). Not a send: never answered, never counted as one.
     */
    public void offerTyping(String chatId) {
        if (!connected) {
            return;
        }
        long now = System.nanoTime();
        Long last = typedAt.get(chatId);
        if (last != null && now - last < TYPING_EVERY_NANOS) {
            return;
        }
        typedAt.put(chatId, now);
        outbound.add(TYPING_HEAD + quote(chatId) + "\"}");
    }

    static final String TYPING_HEAD = "{\"type\":\"typing\",\"chatId\":\"";
    static final long TYPING_EVERY_NANOS = TimeUnit.SECONDS.toNanos(3);
    private final java.util.Map<String, Long> typedAt = new java.util.concurrent.ConcurrentHashMap<>();

    public boolean offerSend(String chatId, String body) {
        if (!connected) {
            return false;
        }
        if (heldBack()) {
            return true;
        }
        String corr = userId + "-" + sequence.incrementAndGet();
        offer(chatId, corr, sendFrame(corr, chatId, body), null);
        return true;
    }

    /**
     * Offers an edit or delete of one of this client's own accepted messages in the chat, or a
     * reaction to one it received there (toggling: on if its last react of that emoji there
     * asked off, or none did), as {@link #offerSend} offers a send. With no such message yet, it
     * offers a send of {@code body} instead, and counts that. A message it deletes is one it
     * neither edits nor deletes again.
     */
    public boolean offerEntry(String chatId, EntryKind kind, String body, java.util.Random random) {
        if (!connected) {
            return false;
        }
        if (heldBack()) {
            return true;
        }
        Targets pool = (kind == EntryKind.REACT ? othersTexts : ownTexts).get(chatId);
        String target = pool == null ? null : pool.pick(random);
        if (target == null) {
            run.stats.entriesWithoutTarget.increment();
            String corr = userId + "-" + sequence.incrementAndGet();
            offer(chatId, corr, sendFrame(corr, chatId, body), null);
            return true;
        }
        String corr = userId + "-" + sequence.incrementAndGet();
        EntrySpec spec;
        String frame;
        switch (kind) {
            case EDIT -> {
                String edited = editBody(corr, body.length());
                spec = new EntrySpec(kind, target, edited, null, false);
                frame = entryFrame("edit", corr, chatId, target, "\"body\":\"" + quote(edited) + "\"");
            }
            case DELETE -> {
                pool.remove(target);
                spec = new EntrySpec(kind, target, null, null, false);
                frame = entryFrame("delete", corr, chatId, target, null);
            }
            default -> {
                String emoji = EMOJI.get(random.nextInt(EMOJI.size()));
                boolean on = !reactionOn.getOrDefault(target + "\u0000" + emoji, false);
                reactionOn.put(target + "\u0000" + emoji, on);
                spec = new EntrySpec(kind, target, null, emoji, on);
                frame = entryFrame("react", corr, chatId, target, "\"emoji\":\"" + quote(emoji) + "\",\"on\":" + on);
            }
        }
        offer(chatId, corr, frame, spec);
        return true;
    }

    /** An edit's new text: unique to the edit (its correlationId), padded to the run's payload. */
    static String editBody(String correlationId, int length) {
        String head = "edit " + correlationId + " ";
        return head.length() >= length ? head.strip() : head + "e".repeat(length - head.length());
    }

    /** An {@code edit}, {@code delete} or {@code react} frame; {@code extra} is the frame's further members, already JSON. */
    static String entryFrame(String type, String correlationId, String chatId, String messageId, String extra) {
        return "{\"type\":\"" + type + "\",\"correlationId\":\"" + quote(correlationId) + "\",\"chatId\":\"" + quote(chatId)
                + "\",\"messageId\":\"" + quote(messageId) + "\"" + (extra == null ? "" : "," + extra) + "}";
    }

    private static String quote(String s) {
        StringBuilder b = new StringBuilder(s.length() + 8);
        QUOTE.quoteAsString(s, b);
        return b.toString();
    }

    /** True (and counted) when the run's window or an overloaded back-off holds this client's next send back. */
    private boolean heldBack() {
        int window = run.cfg.window();
        if (window > 0 && unanswered.size() >= window || backoffUntil != 0 && System.nanoTime() - backoffUntil < 0) {
            run.stats.heldByWindow.increment();
            return true;
        }
        return false;
    }

    private void offer(String chatId, String corr, String frame, EntrySpec entry) {
        long now = System.nanoTime();
        unanswered.put(corr, new Pending(chatId, frame, now, entry));
        run.sentAt.put(corr, now);
        // Straight to the transport when it can take the frame without waiting (netty): no
        // wake-up of this client's writer per send. Only on a connection that is welcomed and
        // resynced (live), and only while the writer holds no send of this client, queued or in
        // hand, so that sends still leave in the order they were made. Otherwise the writer
        // sends it. A frame lost with a dying connection stays unanswered and is sent again
        // after the reconnect, as any other (and is timed then, from when it was due).
        WsLink l = live;
        if (l != null && queuedSends.get() == 0 && l.trySendNow(frame, ok -> {
            if (ok) {
                run.stats.sent.increment();
                run.stats.written(now);
            }
            else {
                offeredAt.put(frame, now);
            }
        })) {
            lastWriteNanos = now;
            return;
        }
        offeredAt.put(frame, now);
        enqueueSend(frame);
    }

    /** A {@code send} frame: the text Jackson's tree wrote for it, built without the tree (one per message). */
    static String sendFrame(String correlationId, String chatId, String body) {
        StringBuilder b = new StringBuilder(64 + correlationId.length() + chatId.length() + body.length());
        b.append("{\"type\":\"send\",\"correlationId\":\"");
        QUOTE.quoteAsString(correlationId, b);
        b.append("\",\"chatId\":\"");
        QUOTE.quoteAsString(chatId, b);
        b.append("\",\"body\":\"");
        QUOTE.quoteAsString(body, b);
        return b.append("\"}").toString();
    }

    private static final JsonStringEncoder QUOTE = JsonStringEncoder.getInstance();

    /**
     * After an {@code overloaded}, as a production client told to retry later: no send for the
     * back-off, which doubles while refusals continue (to 20 times the first; each wait is that
     * ±25 %, so that refused clients do not all come back in the same instant) and starts again
     * from the first once a send made after the back-off is accepted (answers to sends made before
     * it say nothing about the server now). Off when --overload-backoff is zero. A refusal that
     * arrives while a back-off runs does not lengthen it.
     */
    private void backOff() {
        long first = run.cfg.overloadBackoff().toNanos();
        long now = System.nanoTime();
        if (first <= 0 || backoffUntil != 0 && now - backoffUntil < 0) {
            return;
        }
        long next = backoffNanos == 0 ? first : Math.min(backoffNanos * 2, first * 20);
        backoffNanos = next;
        backoffUntil = now + (long) (next * (0.75 + 0.5 * java.util.concurrent.ThreadLocalRandom.current().nextDouble()));
    }

    /** Hands a send to the writer; counted until the writer has tried to write it. */
    private void enqueueSend(String frame) {
        queuedSends.incrementAndGet();
        outbound.add(frame);
    }

    /** No sends may go straight to the transport until the next connection is resynced. */
    private void offline() {
        connected = false;
        live = null;
    }

    public int unansweredCount() {
        return unanswered.size();
    }

    /**
     * Reconnect storm: the connection is dropped now (as a network blip would) and the writer
     * reconnects and resyncs at once; the time from {@code atNanos} until it has done both is
     * recorded.
     */
    public void drop(long atNanos) {
        stormFrom = atNanos;
        offline();
        current = null;
        WsLink l = link;
        if (l != null) {
            l.close("storm");
        }
        outbound.add(WAKE);
    }

    /** The client stops reading from its socket (the server sees a full TCP window). */
    public void stopReading() {
        reading = false;
        WsLink l = link;
        if (l != null) {
            l.pauseReading();
        }
    }

    private void writeLoop() {
        while (run.active()) {
            try {
                if (!connected) {
                    connectAndResync();
                    continue;
                }
                String frame = outbound.poll(1, TimeUnit.SECONDS);
                if (frame == WAKE) {
                    continue;
                }
                if (frame == ACK_SIGNAL) {
                    ackSignalled.set(false);
                    flushAcks(link);
                }
                else if (frame != null && frame.startsWith(TYPING_HEAD)) {
                    write(frame);
                    run.stats.typing.increment();
                }
                else if (frame != null) {
                    try {
                        write(frame);
                    }
                    finally {
                        queuedSends.decrementAndGet();
                    }
                    run.stats.sent.increment();
                    Long offered = offeredAt.remove(frame);
                    if (offered != null) {
                        run.stats.written(offered);
                    }
                }
                else if (System.nanoTime() - lastWriteNanos > TimeUnit.SECONDS.toNanos(10)) {
                    write("{\"type\":\"ping\"}");
                }
                if (behaviour == Behaviour.RECONNECTING && System.nanoTime() >= nextDropNanos) {
                    nextDropNanos = System.nanoTime() + run.reconnectEveryNanos();
                    offline();
                    current = null;
                    link.close("simulated drop");
                }
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            catch (Exception e) {
                offline();
                if (stormFrom == 0) {
                    pause(200);
                }
            }
        }
        offline();
        current = null;
        WsLink l = link;
        if (l != null) {
            l.close("run over");
        }
    }

    private void write(String frame) throws Exception {
        write(link, frame);
    }

    private void write(WsLink to, String frame) throws Exception {
        to.send(frame);
        lastWriteNanos = System.nanoTime();
    }

    private void flushAcks(WsLink to) throws Exception {
        while (!acks.isEmpty()) {
            flushAckChunk(to);
        }
    }

    /** Sends up to 5,000 queued acks in one frame; on a failed write they go back to the queue. */
    private void flushAckChunk(WsLink to) throws Exception {
        StringBuilder b = new StringBuilder("{\"type\":\"ack\",\"ids\":[");
        List<Long> taken = new ArrayList<>();
        Long id;
        while (taken.size() < 5000 && (id = acks.poll()) != null) {
            if (!taken.isEmpty()) {
                b.append(',');
            }
            b.append(id);
            taken.add(id);
        }
        try {
            write(to, b.append("]}").toString());
        }
        catch (Exception e) {
            acks.addAll(taken);
            throw e;
        }
        run.stats.acksSent.add(taken.size());
    }

    private void connectAndResync() {
        boolean first = !everConnected;
        String phase = "upgrade";
        try {
            CompletableFuture<Void> welcomed = new CompletableFuture<>();
            reading = behaviour != Behaviour.STOP_READING || !run.stopReadingNow();
            Events events = new Events(welcomed);
            current = events;
            // First connections go in waves (a bounded number at once), as a fleet of clients
            // coming online would; reconnects, the storm's above all, go all at once.
            boolean wave = first;
            if (wave) {
                run.firstConnects.acquire();
            }
            try {
                link = run.connector.connect(URI.create(run.ws(node)), token, events).get(15, TimeUnit.SECONDS);
                events.own = link;
                phase = "welcome";
                welcomed.get(15, TimeUnit.SECONDS);
            }
            finally {
                if (wave) {
                    run.firstConnects.release();
                }
            }
            everConnected = true;
            if (!reading) {
                link.pauseReading();
            }
            if (!first) {
                run.stats.reconnects.increment();
            }
            if (node != home) {
                run.stats.failovers.increment();
            }
            phase = "resync";
            resync();
            if (!first) {
                run.stats.reconnectResyncs.increment();
            }
            connected = true;
            long from = stormFrom;
            if (from != 0) {
                stormFrom = 0;
                Stats.record(run.stats.stormRecovery, from);
            }
            long killed = killedFrom;
            if (killed != 0) {
                killedFrom = 0;
                Stats.record(run.stats.killRecovery, killed);
            }
            ackSignalled.set(false);
            for (Map.Entry<String, Pending> p : unanswered.entrySet()) {
                enqueueSend(p.getValue().frame());
                run.stats.resent.increment();
            }
            live = link;
        }
        catch (Exception e) {
            if (run.active()) {
                run.stats.connectFailed(phase, e);
            }
            offline();
            if (phase.equals("upgrade") && run.nodeCount() > 1) {
                // the node does not answer: fail over to the next one, as a client given a list of
                // a deployment's addresses does
                node = (node + 1) % run.nodeCount();
            }
            pause(500);
        }
    }

    /** The node this client is on (or trying). */
    public int node() {
        return node;
    }

    /** Its node is being killed: the time until it has reconnected elsewhere and resynced is recorded. */
    public void nodeDies(long atNanos) {
        killedFrom = atNanos;
    }

    /** Pages every chat's history since the last message up to which this client holds all. */
    void resync() {
        resyncFrom(run.base(node));
    }

    /** {@link #resync} from the node at {@code base} (the final resync reads from the first node, which is never killed). */
    public void resyncFrom(String base) {
        for (String chat : chats) {
            Cursor c = cursors.get(chat);
            for (JsonNode m : run.history(base, token, chat, c.since())) {
                run.stats.syncedMessages.increment();
                received(m);
            }
        }
    }

    private void received(JsonNode m) {
        String messageId = m.get("messageId").asString(), chatId = m.get("chatId").asString();
        JsonNode kind = m.get("kind"), sender = m.get("senderId");
        if ((kind == null || "text".equals(kind.asString())) && sender != null && !userId.equals(sender.asString())
                && !m.path("deleted").asBoolean(false)) {
            reactable(chatId, messageId);
        }
        received(messageId, chatId, m.get("seq").asLong());
    }

    private void reactable(String chatId, String messageId) {
        othersTexts.computeIfAbsent(chatId, k -> new Targets()).add(messageId);
    }

    private void received(String messageId, String chatId, long seq) {
        receivedCounts.merge(messageId, 1, Integer::sum);
        held.add(messageId);
        cursors.get(chatId).add(seq, messageId);
    }

    private void onFrame(WireFrame f, CompletableFuture<Void> welcomed) {
        switch (String.valueOf(f.type())) {
            case "welcome" -> welcomed.complete(null);
            case "accepted" -> {
                if (f.correlationId() == null) {
                    run.stats.error("accepted without correlationId");
                    return;
                }
                Pending p = unanswered.remove(f.correlationId());
                long until = backoffUntil;
                if (p != null && until != 0 && p.firstSentNanos() - until >= 0) {
                    backoffNanos = 0;   // a send made after the back-off was taken: the server has room again
                }
                if (p != null && p.entry() == null) {
                    Stats.record(run.stats.acceptLatency, p.firstSentNanos());
                    run.accepted(f.messageId(), f.chatId(), userId);
                    ownTexts.computeIfAbsent(f.chatId(), k -> new Targets()).add(f.messageId());
                }
                else if (p != null && f.unchanged()) {
                    // a react that changed nothing: accepted with its target's id and seq, no new entry
                    run.stats.unchangedEntries.increment();
                }
                else if (p != null) {
                    Stats.record(run.stats.acceptLatency, p.firstSentNanos());
                    run.acceptedEntry(p.entry(), f.messageId(), f.chatId(), userId, f.seq());
                }
                // its own messages are never delivered to it: note them so the resync cursor passes them
                cursors.get(f.chatId()).add(f.seq(), f.messageId());
            }
            case "error" -> {
                String corr = f.correlationId();
                String code = String.valueOf(f.code());
                Pending p = corr == null ? null : unanswered.remove(corr);
                if (p != null) {
                    if (p.entry() != null && p.entry().kind() == EntryKind.REACT) {
                        // not taken: whether it is on is the server's to say; the next react of it asks on
                        reactionOn.remove(p.entry().targetId() + "\u0000" + p.entry().emoji());
                    }
                    run.stats.rejected(code);
                    if (code.equals("overloaded")) {
                        backOff();
                    }
                }
                else {
                    run.stats.error(code);
                }
            }
            case "message" -> {
                run.stats.deliveries.increment();
                String messageId = f.messageId();
                liveCounts.merge(messageId, 1, Integer::sum);
                if (!held.contains(messageId)) {
                    Long sentAt = f.correlationId() == null ? null : run.sentAt.get(f.correlationId());
                    if (sentAt != null) {
                        run.stats.delivered(sentAt, run.secondHalfFromNanos());
                    }
                }
                if (f.kind() == null || f.kind().equals("text")) {
                    reactable(f.chatId(), messageId);
                }
                else if (f.kind().equals("delete") && f.targetId() != null) {
                    Targets others = othersTexts.get(f.chatId());
                    if (others != null) {
                        others.remove(f.targetId());   // gone: no more reactions to it
                    }
                }
                received(messageId, f.chatId(), f.seq());
                long deliveryId = f.deliveryId();
                if (deliveryId < 0) {
                    run.stats.error("message without deliveryId");
                    return;
                }
                switch (behaviour) {
                    case NEVER_ACK -> { }
                    case SLOW_ACK -> run.later(run.slowAckDelay(), () -> ack(deliveryId));
                    default -> ack(deliveryId);
                }
            }
            default -> { }
        }
    }

    /**
     * Queues an ack. On a link that writes on read complete (netty), the acks of everything one
     * socket read delivered go out together from the transport's own thread once the read is
     * handed over ({@link Events#onReadComplete}); otherwise the writer thread is signalled.
     * Slow acks, which come from a timer thread, always take the writer.
     */
    private void ack(long deliveryId) {
        acks.add(deliveryId);
        if (onTransportThread.get()) {
            return;
        }
        signalWriter();
    }

    /**
     * True while this thread is inside {@link Events#onText} of a connection whose link is known
     * and writes on read complete: that connection's {@link Events#onReadComplete} follows on this
     * thread and sends the acks.
     */
    private static final ThreadLocal<Boolean> onTransportThread = ThreadLocal.withInitial(() -> false);

    /**
     * Writes the queued acks on {@code own}, the connection whose read produced them, from its
     * transport thread (see {@link #ack}). When that write fails the acks are back in the queue
     * and the writer is signalled to send them on whatever connection comes next.
     */
    private void flushAcksOnReadComplete(WsLink own) {
        try {
            flushAcks(own);
        }
        catch (Exception e) {
            signalWriter();
        }
    }

    private void signalWriter() {
        if (ackSignalled.compareAndSet(false, true)) {
            outbound.add(ACK_SIGNAL);
        }
    }

    private static void pause(long ms) {
        try {
            Thread.sleep(ms);
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Frames and the close of one connection; a superseded connection's close changes nothing. */
    private final class Events implements WsLink.Events {
        private final CompletableFuture<Void> welcomed;
        /** This connection's link, once the upgrade has returned it; null before. */
        volatile WsLink own;

        Events(CompletableFuture<Void> welcomed) {
            this.welcomed = welcomed;
        }

        @Override
        public void onText(String frame) {
            WsLink l = own;
            boolean inLoop = l != null && l.writesOnReadComplete() && current == this;
            if (inLoop) {
                onTransportThread.set(true);
            }
            try {
                onFrame(WireFrame.parse(frame), welcomed);
            }
            finally {
                if (inLoop) {
                    onTransportThread.set(false);
                }
            }
        }

        @Override
        public void onReadComplete() {
            if (acks.isEmpty()) {
                return;
            }
            WsLink l = own;
            if (l != null && current == this) {
                flushAcksOnReadComplete(l);
            }
            else {
                signalWriter();
            }
        }

        @Override
        public void onClose(int code) {
            run.stats.closed(code);
            if (current == this) {
                offline();
            }
        }
    }
}
