package dev.waterline.hooks;

/**
 * What becomes of a claimed delivery once its call ended: the outcome the recorder writes
 * ({@link DeliveryQueueRepository#record}) and, for an attempt that was made, the {@code outcome} label of
 * {@code waterline_hook_deliveries_total}.
 */
enum Verdict {

    /** The target took it: the row is deleted. Label {@code ok}. */
    DONE("ok"),
    /** Tried and failed: back to pending (or held), due at the outcome's time. Label {@code retry}. */
    RETRY("retry"),
    /** The call was not made (or was cut short by shutdown): back as it was, the attempt not counted. No label. */
    RELEASE(null),
    /** To the dead letters. Label {@code dead}. */
    DEAD("dead");

    private final String label;

    Verdict(String label) {
        this.label = label;
    }

    /** The {@code outcome} label of an attempt with this verdict; null for {@link #RELEASE}, which is no attempt. */
    String label() {
        return label;
    }
}
