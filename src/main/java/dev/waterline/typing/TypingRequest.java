package dev.waterline.typing;

import dev.waterline.session.ClientSession;

/** One {@code typing} frame that passed its coalescing, waiting for its chat's members. */
record TypingRequest(ClientSession from, String chatId) {
}
