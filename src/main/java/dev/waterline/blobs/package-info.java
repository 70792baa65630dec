/**
 * User content: files kept outside the message path (a stream's blobs, and the attachments to
 * come), stored in parts behind one port ({@link dev.waterline.blobs.BlobStore}; PostgreSQL in
 * {@code blobs.postgres}), read and written a part at a time so that no file is ever whole in the
 * heap, within a budget of concurrent transfers; served so that no browser runs it as our origin's
 * page ({@link dev.waterline.blobs.UserContent}); and removed through a ledger that a crash cannot
 * lose ({@link dev.waterline.blobs.BlobRemovals}). Calls {@code web}, {@code lifecycle} and
 * {@code metrics}.
 */
package dev.waterline.blobs;
