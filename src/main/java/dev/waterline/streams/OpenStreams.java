package dev.waterline.streams;

import java.util.ArrayList;
import java.util.List;

import dev.waterline.ingest.CommitParticipant;
import dev.waterline.ingest.SendRequest;
import dev.waterline.sql.Statement;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/**
 * Streams' part of the group commit: the row of each stream whose opening message the batch
 * commits, in that message's transaction (so a stream exists exactly when its {@code kind}
 * {@code "stream"} message does, with its history row, its outbox rows and its seq in the chat).
 */
@Component
@Order(1)
class OpenStreams implements CommitParticipant {

    /** 1..6: pairwise arrays of stream id, chat id, producer, title, message id, chat seq. */
    private static final String INSERT_STREAMS = """
            INSERT INTO streams (stream_id, chat_id, producer_id, title, message_id, chat_seq, created_at, last_append_at)
            SELECT stream_id, chat_id, producer_id, NULLIF(title, ''), message_id, chat_seq, now(), now()
            FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[])
                 AS s(stream_id, chat_id, producer_id, title, message_id, chat_seq)
            """;

    private final StreamMetrics metrics;

    OpenStreams(StreamMetrics metrics) {
        this.metrics = metrics;
    }

    @Override
    public Contribution contribute(Batch batch) {
        List<NewMessage> opening = new ArrayList<>();
        for (NewMessage m : batch.messages()) {
            if (SendRequest.STREAM.equals(m.kind())) {
                opening.add(m);
            }
        }
        if (opening.isEmpty()) {
            return null;
        }
        int n = opening.size();
        String[] stream = new String[n], chat = new String[n], producer = new String[n], title = new String[n], message = new String[n];
        long[] seq = new long[n];
        for (int i = 0; i < n; i++) {
            NewMessage m = opening.get(i);
            stream[i] = m.streamId();
            chat[i] = m.chatId();
            producer[i] = m.senderId();
            title[i] = m.body();
            message[i] = m.messageId();
            seq[i] = m.seq();
        }
        Statement insert = Statement.of(INSERT_STREAMS, null, stream, chat, producer, title, message, seq);
        return new Contribution() {
            @Override
            public List<Statement> statements() {
                return List.of(insert);
            }

            @Override
            public void committed(long committedAtMillis) {
                for (int i = 0; i < n; i++) {
                    metrics.opened();
                }
            }
        };
    }
}
