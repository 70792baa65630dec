/**
 * Search (PROTOCOL.md §10): {@code GET /api/search}, the caller's readable messages that match a
 * query, newest first, a page at a time behind an opaque cursor, each with a highlighted snippet.
 * PostgreSQL full-text search over a GIN index of the text messages' current bodies (V15), under
 * one text-search configuration chosen at migrate time ({@code waterline.search.text-config}); each
 * search runs in a database turn, a bounded number at once, under a statement timeout. Calls
 * {@code auth}, {@code web}, {@code lifecycle} and {@code metrics}.
 */
package dev.waterline.search;
