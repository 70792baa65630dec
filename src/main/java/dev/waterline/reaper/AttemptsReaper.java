package dev.waterline.reaper;

import java.util.stream.IntStream;

import dev.waterline.presence.Location;
import dev.waterline.session.ClientSession;
import org.springframework.stereotype.Component;

/**
 * The attempts reaper: a delivery re-sent {@code max-delivery-attempts} times without an ack
 * withdraws its recipient (4008) instead of being re-sent once more. The poller meets the rows (its
 * claims count the re-sends) and asks this reaper for the verdict ({@link Verdict}, pure); the
 * withdrawal goes through {@link Withdrawals}, as every reaper's does.
 */
@Component
public class AttemptsReaper {

    static final String REAPER = "attempts";
    static final int CLOSE_CODE = 4008;

    /**
     * The verdict on one recipient's rows that are pending (written, never acked), given how often
     * each has been re-sent: any that has been re-sent {@code maxDeliveryAttempts} times withdraws
     * the recipient.
     */
    public record Verdict(int maxDeliveryAttempts) {

        public boolean withdraws(IntStream attemptsOfPendingRows) {
            return attemptsOfPendingRows.anyMatch(attempts -> attempts >= maxDeliveryAttempts);
        }

        String reason() {
            return "withdrawn: a delivery was re-sent " + maxDeliveryAttempts + " times without an ack";
        }
    }

    private final Verdict verdict;
    private final Withdrawals withdrawals;

    AttemptsReaper(ReaperProperties properties, Withdrawals withdrawals) {
        this.verdict = new Verdict(properties.maxDeliveryAttempts());
        this.withdrawals = withdrawals;
    }

    public Verdict verdict() {
        return verdict;
    }

    /** Withdraws a connection of this node that the verdict condemned. */
    public void withdraw(ClientSession to) {
        withdrawals.withdraw(to, REAPER, CLOSE_CODE, verdict.reason());
    }

    /** Withdraws a connection of another node that the verdict condemned. */
    public void withdraw(Location there) {
        withdrawals.withdrawElsewhere(there, REAPER, CLOSE_CODE, verdict.reason());
    }
}
