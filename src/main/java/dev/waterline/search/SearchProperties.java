package dev.waterline.search;

import java.time.Duration;
import java.util.regex.Pattern;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code waterline.search.*}.
 *
 * @param textConfig the PostgreSQL text-search configuration the index is built with and every
 *                   query parsed with ({@code simple}, {@code english}, {@code german} …, or a
 *                   schema-qualified one of your own). It is read when the migration V15 runs (a
 *                   Flyway placeholder): on a database that ran it, changing it takes the procedure
 *                   in docs/OPERATIONS.md, and until then the server warns at start and searches with
 *                   the database's. Default {@code simple}: no stemming and no stop words, so a word of
 *                   any language is found as written.
 * @param statementTimeout the longest one search may run at PostgreSQL; a search stopped by it is
 *                         answered {@code 503 unavailable} and counted
 *                         ({@code waterline_search_timeouts_total}). Default 2 s.
 * @param maxQueryChars longest {@code q}, in UTF-16 code units; longer is {@code 400 invalid}. Default 256.
 * @param maxConcurrent searches at PostgreSQL at once, within the REST turns
 *                      ({@code waterline.api.max-concurrent-queries}), so that searches never take
 *                      every turn from history pages; a search that finds none free within
 *                      {@code statement-timeout} is answered {@code 503 unavailable} with
 *                      {@code Retry-After}. Default 4.
 */
@ConfigurationProperties("waterline.search")
public record SearchProperties(
        @DefaultValue("simple") String textConfig,
        @DefaultValue("2s") Duration statementTimeout,
        @DefaultValue("256") int maxQueryChars,
        @DefaultValue("4") int maxConcurrent) {

    /** An identifier, optionally schema-qualified, as the placeholder is written into SQL unquoted by Flyway. */
    private static final Pattern CONFIG_NAME = Pattern.compile("[a-z_][a-z0-9_]*(\\.[a-z_][a-z0-9_]*)?");

    public SearchProperties {
        if (!CONFIG_NAME.matcher(textConfig).matches()) {
            throw new IllegalArgumentException("waterline.search.text-config must name a text-search configuration"
                    + " (lower-case letters, digits and _, optionally schema.name), not '" + textConfig + "'");
        }
        if (statementTimeout.toMillis() < 1 || maxQueryChars < 1 || maxConcurrent < 1) {
            throw new IllegalArgumentException("waterline.search.statement-timeout must be at least 1 ms, and max-query-chars"
                    + " and max-concurrent at least 1");
        }
    }
}
