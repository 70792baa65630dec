package dev.waterline.load.clients;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class SeqCursorUnitTests {

    @Test
    void inOrderSeqsAdvanceAndRepeatsAndSkipsAreCounted() {
        SeqCursor c = new SeqCursor(1);
        assertThat(c.take(1)).isTrue();
        assertThat(c.take(2)).isTrue();
        assertThat(c.take(2)).as("a repeat").isFalse();
        assertThat(c.take(5)).as("3 and 4 skipped").isFalse();
        assertThat(c.take(6)).isTrue();
        assertThat(c.next).isEqualTo(7);
        assertThat(c.duplicates).isEqualTo(1);
        assertThat(c.gaps).isEqualTo(2);
    }

    @Test
    void aReaderFromALaterSeqStartsThere() {
        SeqCursor c = new SeqCursor(40);
        assertThat(c.take(39)).isFalse();
        assertThat(c.take(40)).isTrue();
        assertThat(c.duplicates).isEqualTo(1);
        assertThat(c.gaps).isZero();
    }
}
