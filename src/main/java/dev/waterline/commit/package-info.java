/**
 * The group commit's transaction as the ports that join it see it: opaque, so that a port below
 * ingest (the outbox's append) can take part in ingest's commit without naming JDBC, and without
 * depending on ingest (which would close a cycle). Ingest opens and owns the transaction; each
 * store's adapter unwraps it to the kind it writes in. And the message the commit writes
 * ({@link dev.waterline.commit.ChatMessage}), made once by ingest and carried as is by the
 * outbox's rows. Calls nothing else.
 */
package dev.waterline.commit;
