-- Search (PROTOCOL.md §10, docs/ARCHITECTURE.md "Search"). Needs nothing of V14: it reads only
-- message_history's columns from V1, V6 and V13.
--
-- The text-search configuration is chosen at migrate time: ${searchconfig} is the Flyway placeholder
-- that application.properties fills from waterline.search.text-config (default simple: no stemming
-- and no stop words, so a word of any language is found as written). It is named once, by the
-- function below, and both the index and every query reach it through that function (a SQL function
-- of one constant is inlined by the planner, so the query's expression is the index's). Changing it
-- on a database that ran this migration is the procedure in docs/OPERATIONS.md "Search": a new index
-- built concurrently under the new configuration, then the function replaced and the indexes swapped
-- in one short transaction. Flyway computes a versioned migration's checksum before placeholders are
-- replaced, so a changed property never fails validation; the server compares the two at start and
-- warns when they differ (SearchConfigCheck).
CREATE FUNCTION waterline_search_config() RETURNS regconfig
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT '${searchconfig}'::regconfig $$;

-- The words of every text message, as a GIN index over an expression rather than a stored tsvector
-- column: the index is the only copy of the lexemes, so the table's rows (and the WAL of every group
-- commit) do not grow by a second copy of each body, and adding it rewrites no row of an existing
-- table (a stored generated column would rewrite message_history under an exclusive lock). What a
-- search re-derives from the body instead, it derives only for the rows it returns or rechecks.
-- Partial: only text entries are searched (an edit's new text is searched as its message's body,
-- which the edit rewrites; deletes, reactions, member and stream entries hold no text to find), so
-- no other kind pays for it. fastupdate off: with the pending list on, the insert that finds it full
-- (4 MB by default) merges it into the index inside its own transaction, which here is a group
-- commit that every sender of its batch waits for, and every search reads the whole unsorted list;
-- off, each text message pays its own few entry insertions and no commit pays for others'
-- (a choice by reasoning, not yet by measurement: docs/ARCHITECTURE.md "Search"). Not keyed by chat
-- (btree_gin's (chat_id, words)): the chats a user may search are a join, and where one user's chats
-- hold most of the history a chat key cannot narrow anything (docs/ARCHITECTURE.md "Search").
CREATE INDEX message_history_search ON message_history
    USING gin (to_tsvector(waterline_search_config(), body))
    WITH (fastupdate = off)
    WHERE kind = 'text';
