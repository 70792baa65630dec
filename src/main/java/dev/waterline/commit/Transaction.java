package dev.waterline.commit;

/**
 * One attempt of the group commit's transaction, handed by ingest to each participant: what a
 * participant adds to it commits, or rolls back, with the messages (I1). Opaque: an adapter
 * unwraps it to the kind of transaction its store writes in (the PostgreSQL adapters: a
 * {@code dev.waterline.sql.SqlTransaction}); a store the commit does not run in cannot join it
 * and says so ({@link IllegalArgumentException} from {@link #unwrap}).
 */
public interface Transaction {

    /** This transaction as {@code kind}; {@link IllegalArgumentException} when it is not one. */
    <T> T unwrap(Class<T> kind);
}
