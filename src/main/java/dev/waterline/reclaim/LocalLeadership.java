package dev.waterline.reclaim;

import java.util.Optional;
import java.util.function.Supplier;

import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.stereotype.Component;
import org.springframework.transaction.support.TransactionTemplate;

/** The single-node mode: this node is the only one, and always leads. */
@Component
@ConditionalOnProperty(name = "waterline.cluster.enabled", havingValue = "false", matchIfMissing = true)
class LocalLeadership implements Leadership {

    private final TransactionTemplate tx;

    LocalLeadership(TransactionTemplate tx) {
        this.tx = tx;
    }

    @Override
    public long lead() {
        return 0;
    }

    @Override
    public <T> Optional<T> fenced(long epoch, Supplier<T> work) {
        return Optional.ofNullable(tx.execute(status -> work.get()));
    }

    @Override
    public void resign() {
        // nobody else to hand it to
    }
}
