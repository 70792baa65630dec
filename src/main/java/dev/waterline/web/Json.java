package dev.waterline.web;

import java.util.ArrayList;
import java.util.List;

import dev.waterline.input.InputGate;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Strict field readers for request bodies: a wrong type is {@code invalid}, never coerced. */
public final class Json {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private Json() {
    }

    /**
     * {@code value} serialised now, as the body of an answer: for an answer built within a
     * {@link DatabaseTurns} turn, so that building it is bounded with the queries that fed it.
     */
    public static ResponseEntity<byte[]> answer(HttpStatus status, Object value) {
        return ResponseEntity.status(status).contentType(MediaType.APPLICATION_JSON).body(JSON.writeValueAsBytes(value));
    }

    /** A required id (a user id, PROTOCOL.md §1): {@code 1..max} characters, not blank, no control characters. */
    public static String id(JsonNode body, String field, int max) {
        String s = string(body, field, 1, max);
        String problem = InputGate.idProblem(s, 1, max);
        if (problem != null) {
            throw ApiException.invalid(field + " " + problem);
        }
        return s;
    }

    /** A required array of ids, each as {@link #id}. */
    public static List<String> ids(JsonNode body, String field, int maxEach) {
        List<String> out = strings(body, field, maxEach);
        for (String s : out) {
            String problem = InputGate.idProblem(s, 1, maxEach);
            if (problem != null) {
                throw ApiException.invalid(field + " must hold user ids: one " + problem);
            }
        }
        return out;
    }

    public static JsonNode object(JsonNode body) {
        if (body == null || !body.isObject()) {
            throw ApiException.invalid("the body must be a JSON object");
        }
        return body;
    }

    /** A required string of {@code min..max} characters. */
    public static String string(JsonNode body, String field, int min, int max) {
        JsonNode v = object(body).get(field);
        if (v == null || v.isNull()) {
            throw ApiException.invalid(field + " is required");
        }
        if (!v.isString()) {
            throw ApiException.invalid(field + " must be a string");
        }
        String s = v.asString();
        if (s.length() < min || s.length() > max || (min > 0 && s.isBlank())) {
            throw ApiException.invalid(field + " must be " + min + "-" + max + " characters");
        }
        return s;
    }

    /** An optional string of at most {@code max} characters; null when absent or null. */
    public static String optionalString(JsonNode body, String field, int max) {
        JsonNode v = object(body).get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isString() || v.asString().length() > max) {
            throw ApiException.invalid(field + " must be a string of at most " + max + " characters");
        }
        return v.asString();
    }

    /** A required array of strings, each {@code 1..maxEach} characters. */
    public static List<String> strings(JsonNode body, String field, int maxEach) {
        JsonNode v = object(body).get(field);
        if (v == null || v.isNull()) {
            throw ApiException.invalid(field + " is required");
        }
        if (!v.isArray()) {
            throw ApiException.invalid(field + " must be an array of strings");
        }
        List<String> out = new ArrayList<>(v.size());
        for (JsonNode e : v) {
            if (!e.isString() || e.asString().isBlank() || e.asString().length() > maxEach) {
                throw ApiException.invalid(field + " must hold non-blank strings of 1-" + maxEach + " characters");
            }
            out.add(e.asString());
        }
        return out;
    }

    /** A {@code limit} query parameter: absent is {@code absent}, else an integer from 1 to {@code max} ({@code 400} otherwise). */
    public static int limit(String limit, int absent, int max) {
        if (limit == null) {
            return absent;
        }
        try {
            int n = Integer.parseInt(limit.strip());
            if (n >= 1 && n <= max) {
                return n;
            }
        }
        catch (NumberFormatException e) {
            // falls through to the error below
        }
        throw ApiException.invalid("limit must be an integer from 1 to " + max);
    }
}
