/**
 * The group commit's transaction as the ports that join it see it: opaque, so that a port below
 * ingest (the outbox's append) can take part in ingest's commit without naming JDBC, and without
 * depending on ingest (which would close a cycle). Ingest opens and owns the transaction; each
 * store's adapter unwraps it to the kind it writes in. Calls nothing else.
 */
package dev.waterline.commit;
