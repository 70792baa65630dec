package dev.waterline.load.clients;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The simulated client's frame reader: the fields PROTOCOL.md names, whatever their order, nested values skipped. */
class WireFrameUnitTests {

    @Test
    void aMessageFrameGivesEveryFieldTheClientActsOn() {
        WireFrame f = WireFrame.parse("""
                {"type":"message","deliveryId":9007199254740991,"messageId":"01J0ABC","correlationId":"u1-7",
                 "chatId":"c-1","seq":42,"senderId":"u2","body":"x \\"quoted\\" {not: an object}","sentAt":"2026-12-02T12:00:00Z"}""");
        assertThat(f).isEqualTo(new WireFrame("message", "u1-7", "01J0ABC", "c-1", 42, 9007199254740991L, null, null, null, false));
    }

    @Test
    void nestedValuesAreSkippedAndFieldsAfterThemStillRead() {
        WireFrame f = WireFrame.parse("""
                {"limits":{"type":"nested","seq":1,"inner":[1,{"seq":2}]},"type":"welcome","userId":"u1","sessionId":"s"}""");
        assertThat(f.type()).isEqualTo("welcome");
        assertThat(f.seq()).isEqualTo(-1);
    }

    @Test
    void anErrorGivesItsCodeAndTheSendItAnswers() {
        WireFrame f = WireFrame.parse("{\"type\":\"error\",\"code\":\"overloaded\",\"message\":\"retry later\",\"correlationId\":\"u3-1\"}");
        assertThat(f.code()).isEqualTo("overloaded");
        assertThat(f.correlationId()).isEqualTo("u3-1");
        assertThat(f.deliveryId()).isEqualTo(-1);
    }

    @Test
    void anEntryFrameGivesItsKindAndItsNestedFieldsAreSkipped() {
        WireFrame f = WireFrame.parse("""
                {"type":"message","deliveryId":3,"messageId":"01J0ABD","correlationId":"u1-8","chatId":"c-1","seq":43,
                 "senderId":"u1","body":"","kind":"reaction","targetId":"01J0ABC","emoji":"\ud83d\udc4d","on":true}""");
        assertThat(f.kind()).isEqualTo("reaction");
        assertThat(f.targetId()).isEqualTo("01J0ABC");
        assertThat(f.seq()).isEqualTo(43);
        assertThat(f.unchanged()).isFalse();
    }

    @Test
    void aReactThatChangedNothingIsAcceptedAsUnchanged() {
        WireFrame f = WireFrame.parse("""
                {"type":"accepted","correlationId":"u1-9","messageId":"01J0ABC","chatId":"c-1","seq":42,"sentAt":"x","unchanged":true}""");
        assertThat(f.unchanged()).isTrue();
        assertThat(f.kind()).isNull();
    }

    @Test
    void anythingButAnObjectIsAFrameWithNoType() {
        assertThat(WireFrame.parse("[1,2]").type()).isNull();
        assertThat(WireFrame.parse("\"welcome\"").type()).isNull();
    }
}
