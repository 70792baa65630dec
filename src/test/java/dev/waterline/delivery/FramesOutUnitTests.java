package dev.waterline.delivery;

import dev.waterline.commit.ChatMessage;
import dev.waterline.outbox.OutboxRow;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A row's {@code message} frame is the text it was before the row's message became a record of
 * its own: the same fields from the same row, in the contract's order (docs/PROTOCOL.md).
 */
class FramesOutUnitTests {

    @Test
    void aRowsMessageFrameCarriesItsFieldsInTheContractsOrder() {
        OutboxRow opening = new OutboxRow(7, "bob",
                new ChatMessage("chat-1", 42, "m-7", "alice", "c-1", "hi", "stream", dev.waterline.commit.EntryFields.stream("s-1")), "2026-12-04T00:00:00Z",
                1764806400000L, 2);
        OutboxRow plain = new OutboxRow(8, "carol",
                new ChatMessage("chat-1", 43, "m-8", "alice", null, "yo", null, null), "2026-12-04T00:00:01Z",
                1764806401000L, 0);

        assertThat(FramesOut.message(opening)).isEqualTo("{\"type\":\"message\",\"deliveryId\":7,\"messageId\":\"m-7\","
                + "\"correlationId\":\"c-1\",\"chatId\":\"chat-1\",\"seq\":42,\"senderId\":\"alice\",\"body\":\"hi\","
                + "\"sentAt\":\"2026-12-04T00:00:00Z\",\"kind\":\"stream\",\"streamId\":\"s-1\"}");
        assertThat(FramesOut.message(plain)).isEqualTo("{\"type\":\"message\",\"deliveryId\":8,\"messageId\":\"m-8\","
                + "\"chatId\":\"chat-1\",\"seq\":43,\"senderId\":\"alice\",\"body\":\"yo\","
                + "\"sentAt\":\"2026-12-04T00:00:01Z\",\"kind\":\"text\"}");
    }
}
