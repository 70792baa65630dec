package dev.waterline.streams.local;

import java.util.List;
import java.util.function.Consumer;

import dev.waterline.streams.StreamSignals;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.stereotype.Component;

/** {@link StreamSignals} of the single node: there is no other node to tell, and none tells this one. */
@Component
@ConditionalOnProperty(name = "waterline.cluster.enabled", havingValue = "false", matchIfMissing = true)
class LocalStreamSignals implements StreamSignals {

    @Override
    public void changed(List<Signal> signals) {
        // a single node: its own tails were handed the chunks in memory
    }

    @Override
    public void listen(Consumer<List<Signal>> listener) {
        // nothing ever arrives
    }
}
