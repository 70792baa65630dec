package dev.waterline.hooks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.waterline.ingest.CommitParticipant;
import dev.waterline.presence.Location;
import dev.waterline.presence.Presence;
import dev.waterline.session.SessionRegistry;
import dev.waterline.sql.Statement;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/**
 * Hooks' part of the group commit: one delivery per {@code message} hook of each new message's
 * chat, and for {@code offline} hooks one fan-out row per hook carrying the recipients with no
 * live session (expanded into one delivery each by {@link OfflineFanouts}, outside the commit),
 * inserted in the message's own transaction after its history row (H1: enqueued with the message,
 * never for a message that did not commit). What one message adds to a shared commit is bounded by
 * its chat's hooks ({@code max-hooks-per-chat}), never by hooks times members: the per-recipient
 * rows of ten offline hooks on a 500-member chat (5,010 a message) made a batch time out, and every
 * other send sharing that writer was refused. The hooks are found by the database, not a cache: the batch holds its chats' rows
 * locked, and creating or deleting a hook takes the chat row's lock too, so a hook sees exactly
 * the messages committed after its creation, on every node. The payload is built there too, from
 * the message's history row, written earlier in the same transaction.
 *
 * <p>A delivery of a hook whose breaker is not closed is born {@code held}: the claim never scans
 * it. After commit the workers whose slices got rows are woken. The statements are
 * {@link HookCommitRepository}'s; they run in the group commit's transaction, as every
 * participant's do.
 */
@Component
@Order(2)
class HookParticipant implements CommitParticipant {

    static final Duration PRESENCE_WAIT = Duration.ofMillis(50);
    private static final Executor LOOKUPS = Executors.newVirtualThreadPerTaskExecutor();

    private final OfflineChats offlineChats;
    private final SessionRegistry sessions;
    private final Presence presence;
    private final HookWorkers workers;
    private final OfflineFanouts fanouts;
    private final HookMetrics metrics;
    private final HookCommitRepository store;

    HookParticipant(OfflineChats offlineChats, SessionRegistry sessions, Presence presence, HookWorkers workers,
                    OfflineFanouts fanouts, HookMetrics metrics, HookCommitRepository store) {
        this.offlineChats = offlineChats;
        this.sessions = sessions;
        this.presence = presence;
        this.workers = workers;
        this.fanouts = fanouts;
        this.metrics = metrics;
        this.store = store;
    }

    @Override
    public Contribution contribute(Batch batch) {
        int n = batch.messages().size();
        String[] chats = new String[n];
        long[] seqs = new long[n];
        Set<String> distinct = new HashSet<>();
        for (int i = 0; i < n; i++) {
            NewMessage m = batch.messages().get(i);
            chats[i] = m.chatId();
            seqs[i] = m.seq();
            distinct.add(m.chatId());
        }
        List<Long> ids = new ArrayList<>();
        int[] fanned = {0};
        List<Statement> statements = new ArrayList<>(2);
        statements.add(store.messageDeliveries(distinct.toArray(String[]::new), batch.sentAt().toString(), chats, seqs, ids::add));
        Statement offline = offline(batch, fanned);
        if (offline != null) {
            statements.add(offline);
        }
        if (!batch.erased().isEmpty()) {
            statements.add(store.erasePayloads(batch.erased()));
        }
        return new Contribution() {
            @Override
            public List<Statement> statements() {
                return statements;
            }

            @Override
            public void committed(long committedAtMillis) {
                if (!ids.isEmpty()) {
                    metrics.enqueued(ids.size());
                    workers.wake(ids);
                }
                if (fanned[0] > 0) {
                    fanouts.wake();
                }
            }
        };
    }

    /** The offline fan-outs' statement, or null when no chat of the batch has an offline hook. */
    private Statement offline(Batch batch, int[] fanned) {
        if (offlineChats.isEmpty()) {
            return null;
        }
        List<NewMessage> concerned = new ArrayList<>();
        Set<String> notHere = new HashSet<>();
        for (NewMessage m : batch.messages()) {
            if (offlineChats.has(m.chatId())) {
                concerned.add(m);
                for (String r : m.recipients()) {
                    if (sessions.get(r) == null) {
                        notHere.add(r);
                    }
                }
            }
        }
        if (concerned.isEmpty()) {
            return null;
        }
        // live on another node counts as live; a lookup that fails counts everyone not here as
        // offline (a nudge too many is better than a lost one)
        Map<String, Location> elsewhere = notHere.isEmpty() || !presence.othersMayHold() ? Map.of() : lookup(notHere);
        List<String> chat = new ArrayList<>(), message = new ArrayList<>(), sender = new ArrayList<>(), user = new ArrayList<>();
        List<Long> seq = new ArrayList<>();
        for (NewMessage m : concerned) {
            for (String r : m.recipients()) {
                if (notHere.contains(r) && !elsewhere.containsKey(r)) {
                    chat.add(m.chatId());
                    message.add(m.messageId());
                    seq.add(m.seq());
                    sender.add(m.senderId());
                    user.add(r);
                }
            }
        }
        if (chat.isEmpty()) {
            return null;
        }
        return store.offlineFanouts(chat.toArray(String[]::new), message.toArray(String[]::new),
                seq.stream().mapToLong(Long::longValue).toArray(), sender.toArray(String[]::new), user.toArray(String[]::new), () -> fanned[0]++);
    }

    /**
     * Who of {@code users} is live on another node. This runs inside the group commit's
     * transaction (its chats locked), so it is bounded: past {@link #PRESENCE_WAIT} (Redis slow or
     * gone) or on a failure, nobody is, and those not here get their nudge.
     */
    private Map<String, Location> lookup(Collection<String> users) {
        try {
            return CompletableFuture.supplyAsync(() -> presence.elsewhere(users), LOOKUPS)
                    .get(PRESENCE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            metrics.presenceUnknown();
            return Map.of();
        }
        catch (ExecutionException | TimeoutException | RuntimeException e) {
            metrics.presenceUnknown();
            return Map.of();
        }
    }
}
