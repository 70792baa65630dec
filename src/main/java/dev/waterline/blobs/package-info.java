/**
 * User content: files kept outside the message path (a stream's blobs, a chat's attachments),
 * stored behind one port ({@link dev.waterline.blobs.BlobStore}): in parts in PostgreSQL
 * ({@code blobs.postgres}), or in an S3-compatible object store when one is configured
 * ({@code blobs.s3}; {@link dev.waterline.blobs.StoreChoice} picks one for every file); read and
 * written a part at a time so that no file is ever whole in the heap, within a budget of
 * concurrent transfers; served so that no browser runs it as our origin's page
 * ({@link dev.waterline.blobs.UserContent}); and removed through a ledger that a crash cannot
 * lose ({@link dev.waterline.blobs.BlobRemovals}). Calls {@code web}, {@code lifecycle} and
 * {@code metrics}.
 */
package dev.waterline.blobs;
