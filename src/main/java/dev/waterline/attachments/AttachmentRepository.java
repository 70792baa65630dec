package dev.waterline.attachments;

import java.util.Optional;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Repository;

/**
 * The statements of attachments' uploads, reads and sweep, on {@code attachments} (V13). Each is a
 * transaction of its own. Deleting a row erases its content: V13's triggers delete its parts in
 * PostgreSQL in the same transaction and queue its removal from whichever store holds it.
 */
@Repository
class AttachmentRepository {

    /**
     * An upload begins: the row, uploading, if the uploader is a member of the chat (checked
     * before any byte of the body is read). 1: attachment id, 2: blob id (the same), 3: content
     * type, 4: name (or null), 5: chat id, 6: uploader.
     */
    private static final String BEGIN_UPLOAD = """
            INSERT INTO attachments (attachment_id, chat_id, uploader_id, blob_id, content_type, name)
            SELECT ?, m.chat_id, m.user_id, ?, ?, ? FROM chat_members m WHERE m.chat_id = ? AND m.user_id = ?
            RETURNING attachment_id
            """;

    /** The body is in: the file is stored. 1: size, 2: sha256 (hex), 3: attachment id. No row: the row went meanwhile. */
    private static final String STORE_UPLOAD = """
            UPDATE attachments SET state = 'stored', size = ?, sha256 = ?
            WHERE attachment_id = ? AND state = 'uploading'
            RETURNING attachment_id
            """;

    /** 1: attachment id. An upload that failed or was refused: its row goes, its content with it. */
    private static final String DROP_UPLOAD = """
            DELETE FROM attachments WHERE attachment_id = ? AND state = 'uploading'
            """;

    /**
     * A stored attachment's description, for a reader who may read it: a member of its chat, and,
     * until a send names it ({@code message_seq} null), only its uploader. 1: reader, 2: attachment id.
     */
    private static final String READABLE = """
            SELECT a.blob_id, a.content_type, a.name, a.size, a.sha256
            FROM attachments a
            JOIN chat_members m ON m.chat_id = a.chat_id AND m.user_id = ?
            WHERE a.attachment_id = ? AND a.state = 'stored'
              AND (a.message_seq IS NOT NULL OR a.uploader_id = m.user_id)
            """;

    /**
     * Stored attachments that no send named, uploaded before the cut-off: up to {@code most}, oldest
     * first, through the partial index of unsent rows ({@code attachments_unsent}). A row a send's
     * commit holds locked (it is naming it now) is skipped, not waited for, and the outer condition
     * is checked again on the row as locked, so a row that commit named is never deleted; a send
     * that comes after the delete finds no row. 1: cut-off in ms, 2: most.
     */
    private static final String DELETE_ORPHANS = """
            DELETE FROM attachments
            WHERE attachment_id IN (SELECT attachment_id FROM attachments
                                    WHERE message_seq IS NULL AND state = 'stored'
                                      AND created_at < now() - (? * interval '1 millisecond')
                                    ORDER BY created_at LIMIT ?
                                    FOR UPDATE SKIP LOCKED)
              AND message_seq IS NULL
            """;

    /**
     * Uploads begun before the cut-off and never finished (the client or its node went away;
     * an upload itself is cut off at half of {@code waterline.blobs.upload-timeout}, so none of these
     * is still under way). 1: cut-off in ms, 2: most.
     */
    private static final String DELETE_ABANDONED = """
            DELETE FROM attachments
            WHERE attachment_id IN (SELECT attachment_id FROM attachments
                                    WHERE message_seq IS NULL AND state = 'uploading'
                                      AND created_at < now() - (? * interval '1 millisecond')
                                    ORDER BY created_at LIMIT ?
                                    FOR UPDATE SKIP LOCKED)
              AND state = 'uploading'
            """;

    private final JdbcTemplate jdbc;

    AttachmentRepository(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    /** What an upload is to be: its id, chat, uploader, type and name (or null). */
    record Upload(String attachmentId, String chatId, String uploaderId, String contentType, String name) {
    }

    /** Begins {@code upload}; false when its uploader is not a member of its chat, or there is no such chat. */
    boolean beginUpload(Upload upload) {
        return !jdbc.queryForList(BEGIN_UPLOAD, String.class, upload.attachmentId(), upload.attachmentId(), upload.contentType(),
                upload.name(), upload.chatId(), upload.uploaderId()).isEmpty();
    }

    /** Marks an upload stored; false when its row went meanwhile (its chat deleted, or the sweep took it). */
    boolean storeUpload(String attachmentId, long size, String sha256) {
        return !jdbc.queryForList(STORE_UPLOAD, String.class, size, sha256, attachmentId).isEmpty();
    }

    void dropUpload(String attachmentId) {
        jdbc.update(DROP_UPLOAD, attachmentId);
    }

    /** A stored attachment as its reader may see it. */
    record Stored(String blobId, String contentType, String name, long size, String sha256) {
    }

    Optional<Stored> readable(String attachmentId, String readerId) {
        return jdbc.query(READABLE, (rs, i) -> new Stored(rs.getString(1), rs.getString(2), rs.getString(3), rs.getLong(4),
                rs.getString(5)), readerId, attachmentId).stream().findFirst();
    }

    /** Deletes up to {@code most} attachments never sent and uploaded more than {@code olderThanMillis} ago. */
    int deleteOrphans(long olderThanMillis, int most) {
        return jdbc.update(DELETE_ORPHANS, olderThanMillis, most);
    }

    /** Deletes up to {@code most} uploads begun more than {@code olderThanMillis} ago and never finished. */
    int deleteAbandoned(long olderThanMillis, int most) {
        return jdbc.update(DELETE_ABANDONED, olderThanMillis, most);
    }
}
