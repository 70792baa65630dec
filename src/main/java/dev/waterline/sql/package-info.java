/**
 * Running several SQL statements in one round trip to PostgreSQL ({@link dev.waterline.sql.Statements}),
 * each described by a {@link dev.waterline.sql.Statement}: the group commit sends its own writes
 * and those its commit participants add (the outbox rows, later a stream's opening or a hook's
 * deliveries) as one such round trip. Calls nothing else in Waterline.
 */
package dev.waterline.sql;
