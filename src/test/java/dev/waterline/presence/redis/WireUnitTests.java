package dev.waterline.presence.redis;

import java.util.List;

import dev.waterline.commit.ChatMessage;
import dev.waterline.commit.EntryFields;
import dev.waterline.outbox.OutboxRow;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rows one node hands another keep their text on the channel: thirteen fields per row in the
 * order nodes of earlier builds write and read them (the row's message, a record of its own in
 * {@link OutboxRow}, is still written field by field in its place), and a row of a build before
 * streams (eleven fields) still reads as a text message.
 */
class WireUnitTests {

    static final OutboxRow OPENING = new OutboxRow(7, "bob",
            new ChatMessage("chat-1", 42, "m-7", "alice", "c-1", "hi", "stream", EntryFields.stream("s-1")), "2026-12-04T00:00:00Z",
            1764806400000L, 2);
    static final OutboxRow PLAIN = new OutboxRow(8, "carol",
            new ChatMessage("chat-1", 43, "m-8", "alice", null, "yo", "text", null), "2026-12-04T00:00:01Z",
            1764806401000L, 0);

    /** The text for the two rows above: the thirteenth field (a stream's id, before entries had fields) null, the fields fourteenth. */
    static final String TEXT = "{\"t\":\"rows\",\"poller\":true,\"rows\":["
            + "[7,\"bob\",\"chat-1\",42,\"m-7\",\"alice\",\"c-1\",\"hi\",\"2026-12-04T00:00:00Z\",1764806400000,2,\"stream\",null,"
            + "\"\\\"streamId\\\":\\\"s-1\\\"\"],"
            + "[8,\"carol\",\"chat-1\",43,\"m-8\",\"alice\",null,\"yo\",\"2026-12-04T00:00:01Z\",1764806401000,0,\"text\",null,null]]}";

    @Test
    void rowsAreWrittenFieldByFieldInTheirOrderOnTheChannel() {
        assertThat(Wire.rows(List.of(OPENING, PLAIN), true)).isEqualTo(TEXT);
    }

    @Test
    void rowsReadBackAsTheRowsWritten() {
        List<OutboxRow> read = Wire.rows(Wire.JSON.readTree(Wire.rows(List.of(OPENING), false)));

        assertThat(read).containsExactly(OPENING);
        assertThat(read.getFirst().messageId()).isEqualTo("m-7");
        assertThat(read.getFirst().fields()).isEqualTo("\"streamId\":\"s-1\"");
    }

    @Test
    void aRowOfABuildBeforeEntriesNamesItsStreamAsTheFields() {
        String thirteen = "{\"t\":\"rows\",\"poller\":false,\"rows\":["
                + "[7,\"bob\",\"chat-1\",42,\"m-7\",\"alice\",\"c-1\",\"hi\",\"2026-12-04T00:00:00Z\",1764806400000,2,\"stream\",\"s-1\"]]}";

        assertThat(Wire.rows(Wire.JSON.readTree(thirteen))).containsExactly(OPENING);
    }

    @Test
    void aRowOfABuildBeforeStreamsReadsAsATextMessage() {
        String eleven = "{\"t\":\"rows\",\"poller\":false,\"rows\":["
                + "[9,\"bob\",\"chat-1\",44,\"m-9\",\"alice\",\"c-9\",\"old\",\"2026-12-04T00:00:02Z\",1764806402000,1]]}";

        assertThat(Wire.rows(Wire.JSON.readTree(eleven))).containsExactly(new OutboxRow(9, "bob",
                new ChatMessage("chat-1", 44, "m-9", "alice", "c-9", "old", "text", null), "2026-12-04T00:00:02Z",
                1764806402000L, 1));
    }
}
