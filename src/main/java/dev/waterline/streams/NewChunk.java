package dev.waterline.streams;

/** One chunk of an append, as the producer sent it: {@code data} or {@code blobId}, never both. */
record NewChunk(long seq, String data, String blobId) {
}
