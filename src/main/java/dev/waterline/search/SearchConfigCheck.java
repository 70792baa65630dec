package dev.waterline.search;

import dev.waterline.lifecycle.Loops;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/**
 * At start, compares {@code waterline.search.text-config} with the configuration the database's
 * index was built with (V15 read the property once, when it ran). They differ after the property
 * was changed on a database that already ran V15: the server then searches with the database's
 * configuration (the index only answers for it) and says so at WARN, naming the procedure that
 * changes it (docs/OPERATIONS.md "Search"). Not a reason to refuse to start: the message path does
 * not depend on it. A failure to read it is logged and counted ({@link Loops},
 * {@code search_config_check}) and the server goes on.
 */
@Component
class SearchConfigCheck {

    private static final Log log = LogFactory.getLog(SearchConfigCheck.class);

    private final SearchRepository repository;
    private final SearchProperties properties;
    private final Loops loops;

    static final String LOOP = "search_config_check";

    SearchConfigCheck(SearchRepository repository, SearchProperties properties, Loops loops) {
        this.repository = repository;
        this.properties = properties;
        this.loops = loops;
        loops.declare(LOOP);
    }

    @EventListener(ApplicationReadyEvent.class)
    void compare() {
        loops.pass(LOOP, () -> {
            String database = repository.databaseConfig();
            if (!same(properties.textConfig(), database)) {
                log.warn("waterline.search.text-config is '" + properties.textConfig() + "' but the search index was built with '"
                        + database + "' (the configuration V15 ran with): searching with '" + database
                        + "'; docs/OPERATIONS.md \"Search\" says how to change it");
            }
            else {
                log.info("search: text-search configuration '" + database + "'");
            }
        });
    }

    /** PostgreSQL prints a configuration of pg_catalog without its schema. */
    static boolean same(String configured, String database) {
        return strip(configured).equals(strip(database));
    }

    private static String strip(String name) {
        return name.startsWith("pg_catalog.") ? name.substring("pg_catalog.".length()) : name;
    }
}
