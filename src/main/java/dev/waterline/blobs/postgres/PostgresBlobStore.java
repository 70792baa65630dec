package dev.waterline.blobs.postgres;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

import dev.waterline.blobs.BlobStore;
import dev.waterline.blobs.StoreChoice;
import dev.waterline.web.DatabaseTurns;
import org.springframework.context.annotation.Conditional;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Repository;

/**
 * File contents in PostgreSQL, in parts of {@link #PART_BYTES} ({@code blob_parts}, V8): a write
 * reads one part from the client, then inserts it; a read selects one part, then writes it. Each
 * statement is its own short transaction within one of the REST requests' turns at the database
 * ({@link DatabaseTurns}), and no connection is held while the client's bytes come or go, however
 * slowly: a transfer holds one part of the heap and, between parts, nothing of the pool. The
 * store unless an S3-compatible one is configured ({@link StoreChoice}).
 */
@Repository
@Conditional(StoreChoice.Database.class)
class PostgresBlobStore implements BlobStore {

    /** 256 KiB: 128 parts for a 32 MiB file; a part is read and decoded whole by the driver. */
    static final int PART_BYTES = 256 * 1024;

    /** 1: key, 2: part number, 3: bytes. */
    private static final String INSERT_PART = """
            INSERT INTO blob_parts (blob_id, part, data) VALUES (?, ?, ?)
            """;

    /** 1: from (1-based), 2: length, 3: key, 4: part number. Only the bytes asked for leave the database. */
    private static final String PART = """
            SELECT substring(data FROM ? FOR ?) FROM blob_parts WHERE blob_id = ? AND part = ?
            """;

    private static final String DELETE = """
            DELETE FROM blob_parts WHERE blob_id = ?
            """;

    private final JdbcTemplate jdbc;
    private final DatabaseTurns turns;

    PostgresBlobStore(JdbcTemplate jdbc, DatabaseTurns turns) {
        this.jdbc = jdbc;
        this.turns = turns;
    }

    @Override
    public void write(String key, InputStream in) throws IOException {
        byte[] part = new byte[PART_BYTES];
        for (int n = 0; ; n++) {
            int filled = in.readNBytes(part, 0, PART_BYTES);
            if (filled == 0) {
                return;
            }
            byte[] data = filled == PART_BYTES ? part : java.util.Arrays.copyOf(part, filled);
            int number = n;
            turns.run(() -> jdbc.update(INSERT_PART, key, number, data));
            if (filled < PART_BYTES) {
                return;
            }
        }
    }

    @Override
    public void read(String key, long from, long to, OutputStream out) throws IOException {
        for (long at = from; at < to; ) {
            int number = (int) (at / PART_BYTES);
            int offset = (int) (at % PART_BYTES);
            int length = (int) Math.min(PART_BYTES - offset, to - at);
            byte[] bytes = turns.run(() -> jdbc.query(PART, rs -> rs.next() ? rs.getBytes(1) : null, offset + 1, length, key, number));
            if (bytes == null || bytes.length != length) {
                throw new IOException("part " + number + " of " + key + " is missing or short: the file was removed while it was read");
            }
            out.write(bytes);
            at += length;
        }
    }

    @Override
    public void delete(String key) {
        jdbc.update(DELETE, key);
    }
}
