package dev.waterline.web;

import java.util.ArrayList;
import java.util.List;

import tools.jackson.databind.JsonNode;

/** Strict field readers for request bodies: a wrong type is {@code invalid}, never coerced. */
public final class Json {

    private Json() {
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
}
