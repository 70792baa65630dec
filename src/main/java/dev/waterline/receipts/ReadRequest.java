package dev.waterline.receipts;

import dev.waterline.session.ClientSession;

/** A member's {@code read} frame: it has read {@code chatId} up to {@code seq}. */
public record ReadRequest(ClientSession from, String chatId, long seq) {
}
