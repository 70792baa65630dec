package dev.waterline.hooks;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.springframework.stereotype.Component;

/** The sink of each kind, found among the beans ({@code hooks.sinks}: one per kind). */
@Component
class Sinks {

    private final Map<String, Sink> byKind = new TreeMap<>();

    Sinks(List<Sink> sinks) {
        for (Sink s : sinks) {
            if (byKind.put(s.kind(), s) != null) {
                throw new IllegalStateException("two sinks for the kind " + s.kind());
            }
        }
    }

    Sink of(String kind) {
        return byKind.get(kind);
    }

    List<String> kinds() {
        return List.copyOf(byKind.keySet());
    }

    /** Every sink lets go of what only this hook used. */
    void forget(String hookId) {
        byKind.values().forEach(s -> s.forget(hookId));
    }

    /** Every sink closes its idle connections. */
    void closeIdle() {
        byKind.values().forEach(Sink::closeIdle);
    }
}
