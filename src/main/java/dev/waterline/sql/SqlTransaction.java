package dev.waterline.sql;

/**
 * A PostgreSQL transaction as a participant of the group commit joins it: statements it adds run
 * in that transaction, in the order added, in the same round trip as ingest's own writes
 * ({@link Statements#run}). What a {@code dev.waterline.commit.Transaction} unwraps to for the
 * PostgreSQL adapters.
 */
@FunctionalInterface
public interface SqlTransaction {

    /** Adds {@code statement} to the transaction, after everything added so far. */
    void add(Statement statement);
}
