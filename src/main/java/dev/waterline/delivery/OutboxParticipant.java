package dev.waterline.delivery;

import java.util.ArrayList;
import java.util.List;

import dev.waterline.commit.Transaction;
import dev.waterline.ingest.CommitParticipant;
import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.outbox.OutboxRow;
import dev.waterline.outbox.OutboxStore;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/**
 * Delivery's part of the group commit: one outbox row per recipient of each new message, in the
 * message's own transaction after its history row (I1), each first due for the poller one lease
 * after it is written (the fast path's window). After commit the rows go to the fast path.
 */
@Component
@Order(0)
class OutboxParticipant implements CommitParticipant {

    private final OutboxStore outbox;
    private final FastPath fastPath;
    private final DeliveryProperties properties;
    private final WaterlineMetrics metrics;

    OutboxParticipant(OutboxStore outbox, FastPath fastPath, DeliveryProperties properties, WaterlineMetrics metrics) {
        this.outbox = outbox;
        this.fastPath = fastPath;
        this.properties = properties;
        this.metrics = metrics;
    }

    @Override
    public Contribution contribute(Batch batch) {
        List<OutboxStore.Delivery> deliveries = new ArrayList<>();
        for (NewMessage m : batch.messages()) {
            if (m.recipients().isEmpty()) {
                continue;
            }
            // ingest's one object for the message, shared by its recipients' rows
            for (String recipient : m.recipients()) {
                deliveries.add(new OutboxStore.Delivery(recipient, m.message()));
            }
        }
        if (deliveries.isEmpty() && batch.erased().isEmpty()) {
            return null;
        }
        OutboxStore.Append append = deliveries.isEmpty() ? null : outbox.append(deliveries, batch.sentAt(), properties.lease());
        return new Contribution() {
            @Override
            public void join(Transaction tx) {
                if (append != null) {
                    append.joinCommit(tx);
                }
                // a delete erases the copies of the text it erased (M1)
                if (!batch.erased().isEmpty()) {
                    outbox.erase(batch.erased(), tx);
                }
            }

            @Override
            public void committed(long committedAtMillis) {
                if (append == null) {
                    return;
                }
                List<OutboxRow> rows = append.rows(committedAtMillis);
                metrics.outboxRows(rows.size());
                fastPath.offer(rows);
            }
        };
    }
}
