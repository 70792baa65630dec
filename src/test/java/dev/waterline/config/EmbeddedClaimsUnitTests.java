package dev.waterline.config;

import java.nio.file.Path;
import java.time.Instant;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The claim an earlier server left beside an embedded data folder: its time read back; a file
 * with no claim in it is no claim; a claim whose time cannot be read is taken for none (so no
 * orphan is looked for) and counted, never mistaken for some other failure.
 */
class EmbeddedClaimsUnitTests {

    static final Path LOCK = Path.of("data/postgres.lock");

    @Test
    void aClaimThisClassWroteIsReadBack() {
        assertThat(EmbeddedOrphans.claimedAt("claimed 2026-12-05T07:00:00Z by pid 42\n", LOCK, null))
                .contains(Instant.parse("2026-12-05T07:00:00Z"));
    }

    @Test
    void aFileWithNoClaimInItIsNoClaimAndNoFailure() {
        long before = EmbeddedOrphans.UNREADABLE_CLAIMS.get();

        assertThat(EmbeddedOrphans.claimedAt("", LOCK, null)).isEmpty();
        assertThat(EmbeddedOrphans.claimedAt("something else entirely", LOCK, null)).isEmpty();

        assertThat(EmbeddedOrphans.UNREADABLE_CLAIMS.get()).isEqualTo(before);
    }

    @Test
    void aClaimWhoseTimeCannotBeReadIsTakenForNoneAndCounted() {
        long before = EmbeddedOrphans.UNREADABLE_CLAIMS.get();

        Optional<Instant> claimed = EmbeddedOrphans.claimedAt("claimed 2026-12-05T07:0", LOCK, null);

        assertThat(claimed).isEmpty();
        assertThat(EmbeddedOrphans.UNREADABLE_CLAIMS.get()).isEqualTo(before + 1);
    }
}
