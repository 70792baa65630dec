package dev.waterline.commit;

import java.util.LinkedHashMap;
import java.util.Map;

import tools.jackson.databind.json.JsonMapper;

/**
 * The fields a kind of entry adds to a {@code message} frame (PROTOCOL.md §9), kept as the JSON
 * members they are on the wire, without the braces ({@code "targetId":"01J…","emoji":"👍","on":true}):
 * written once by the group commit, stored with the outbox row, and spliced into each frame as is.
 * Built here only, by a JSON writer, so a field's value is always escaped.
 */
public final class EntryFields {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final Map<String, Object> fields = new LinkedHashMap<>();

    private EntryFields() {
    }

    public static EntryFields of() {
        return new EntryFields();
    }

    /** Adds {@code name} unless {@code value} is null. */
    public EntryFields with(String name, Object value) {
        if (value != null) {
            fields.put(name, value);
        }
        return this;
    }

    /** The members, or null when there are none. */
    public String members() {
        if (fields.isEmpty()) {
            return null;
        }
        String object = JSON.writeValueAsString(fields);
        return object.substring(1, object.length() - 1);
    }

    /** The members of a stream's opening message. */
    public static String stream(String streamId) {
        return of().with("streamId", streamId).members();
    }
}
