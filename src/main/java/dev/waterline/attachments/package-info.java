/**
 * Attachments (PROTOCOL.md §9): files uploaded into a chat before the {@code send} that names them,
 * their description in {@code attachments} (V13), who may read one (its uploader until it is sent,
 * then the chat's members), and the sweep of those never sent. Contents go through {@code blobs}
 * (the one store of user files, and its transfer budget); the send that links an attachment to its
 * message, and the delete that erases it, are the group commit's. Calls {@code blobs}, {@code auth},
 * {@code web}, {@code input}, {@code lifecycle} and {@code metrics}.
 */
package dev.waterline.attachments;
