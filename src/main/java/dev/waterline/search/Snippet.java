package dev.waterline.search;

import java.util.ArrayList;
import java.util.List;

/**
 * A result's excerpt as the wire carries it: plain text, and the ranges of it that matched
 * ({@code [start, end)} in UTF-16 code units, what JavaScript's string indexes count), so a client
 * shows the highlights without parsing markup out of a user's text. PostgreSQL's {@code ts_headline}
 * marks the matches with two markers; they carry a random nonce of the request's
 * ({@link #markers()}), so that no text a user wrote can pass for one.
 */
record Snippet(String text, List<int[]> highlights) {

    /**
     * A body this long or shorter is its own snippet: a chat message is mostly a line, and cutting
     * a line into fragments would drop words around the match that a reader needs (and reorder
     * nothing). Longer bodies get up to two fragments around the matches.
     */
    static final int WHOLE_UP_TO = 200;

    /** The start and stop markers of one request. */
    record Markers(String start, String stop) {
        /** ts_headline's options for a long body: these markers, and up to two fragments of 8 to 30 words. */
        String options() {
            return "StartSel=\"" + start + "\", StopSel=\"" + stop + "\", MaxWords=30, MinWords=8, MaxFragments=2,"
                    + " FragmentDelimiter=\" … \"";
        }

        /** ts_headline's options for a short body ({@link #WHOLE_UP_TO} characters or fewer): all of it, marked. */
        String optionsWhole() {
            return "StartSel=\"" + start + "\", StopSel=\"" + stop + "\", HighlightAll=true";
        }
    }

    static Markers markers(java.util.random.RandomGenerator random) {
        String nonce = Long.toHexString(random.nextLong() | Long.MIN_VALUE);
        return new Markers("[[" + nonce + "[", "]" + nonce + "]]");
    }

    /** {@code headline} with its markers taken out and their places kept as ranges; a stray marker is dropped. */
    static Snippet of(String headline, Markers markers) {
        StringBuilder text = new StringBuilder(headline.length());
        List<int[]> ranges = new ArrayList<>();
        int open = -1;
        int i = 0;
        while (i < headline.length()) {
            if (headline.startsWith(markers.start(), i)) {
                open = text.length();
                i += markers.start().length();
            }
            else if (headline.startsWith(markers.stop(), i)) {
                if (open >= 0 && text.length() > open) {
                    ranges.add(new int[] {open, text.length()});
                }
                open = -1;
                i += markers.stop().length();
            }
            else {
                text.append(headline.charAt(i++));
            }
        }
        return new Snippet(text.toString(), ranges);
    }
}
