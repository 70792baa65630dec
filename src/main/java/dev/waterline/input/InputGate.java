package dev.waterline.input;

import java.util.Map;

import tools.jackson.databind.JsonNode;

/**
 * What text Waterline accepts (PROTOCOL.md §1-§3). Any string: no U+0000 and no unpaired
 * surrogate. An id (user, chat, message, correlation, cursor): additionally no control character
 * (Unicode category Cc: C0, DEL, C1). Lengths are counted in UTF-16 code units, as JavaScript's
 * {@code String.length} counts them, so that a browser client and the server agree.
 *
 * <p>A string that passes is stored and sent back exactly as it came: every other code point,
 * noncharacters, format characters and private use included, is legal text.
 */
public final class InputGate {

    private InputGate() {
    }

    /** Why {@code s} is not acceptable text, or null when it is. */
    public static String textProblem(CharSequence s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\u0000') {
                return "holds U+0000";
            }
            if (Character.isHighSurrogate(c)) {
                if (i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                    i++;
                    continue;
                }
                return "holds an unpaired surrogate";
            }
            if (Character.isLowSurrogate(c)) {
                return "holds an unpaired surrogate";
            }
        }
        return null;
    }

    /** Why {@code s} is not an acceptable id of {@code min..max} code units, or null when it is. */
    public static String idProblem(CharSequence s, int min, int max) {
        if (s.length() < min || s.length() > max) {
            return "must be " + min + "-" + max + " characters";
        }
        String text = textProblem(s);
        if (text != null) {
            return text;
        }
        for (int i = 0; i < s.length(); i++) {
            if (Character.isISOControl(s.charAt(i))) {
                return "holds a control character";
            }
        }
        return null;
    }

    public static boolean isText(CharSequence s) {
        return textProblem(s) == null;
    }

    /**
     * The first string in {@code node} (field names included, at any depth) that is not
     * acceptable text, described for an error message; null when every one is.
     */
    public static String treeProblem(JsonNode node) {
        if (node == null) {
            return null;
        }
        if (node.isString()) {
            String p = textProblem(node.asString());
            return p == null ? null : "a string " + p;
        }
        if (node.isObject()) {
            for (Map.Entry<String, JsonNode> e : node.properties()) {
                if (textProblem(e.getKey()) != null) {
                    return "a field name " + textProblem(e.getKey());
                }
                String p = treeProblem(e.getValue());
                if (p != null) {
                    return p;
                }
            }
        }
        else if (node.isArray()) {
            for (JsonNode e : node) {
                String p = treeProblem(e);
                if (p != null) {
                    return p;
                }
            }
        }
        return null;
    }

    /**
     * {@code s} with every U+0000, unpaired surrogate and other control character replaced by
     * U+FFFD: for echoing something of a refused input in an error message, which must itself
     * be writable.
     */
    public static String printable(String s) {
        if (s == null) {
            return null;
        }
        StringBuilder out = null;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean pair = Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1));
            boolean bad = !pair && (Character.isSurrogate(c) || (Character.isISOControl(c) && c != '\n' && c != '\t'));
            if (bad && out == null) {
                out = new StringBuilder(s.length()).append(s, 0, i);
            }
            if (out != null) {
                out.append(bad ? '\uFFFD' : c);
                if (pair) {
                    out.append(s.charAt(i + 1));
                }
            }
            if (pair) {
                i++;
            }
        }
        return out == null ? s : out.toString();
    }

    /**
     * At most {@code max} code units of {@code s} for an error message, never splitting a
     * surrogate pair (a lone half would make the message itself unwritable).
     */
    public static String abbreviate(String s, int max) {
        if (s.length() <= max) {
            return s;
        }
        int end = Character.isHighSurrogate(s.charAt(max - 1)) ? max - 1 : max;
        return s.substring(0, end) + "…";
    }
}
