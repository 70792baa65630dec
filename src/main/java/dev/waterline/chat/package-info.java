/**
 * Chats and membership: the {@code /api/chats} REST endpoints and the one repository that
 * owns the {@code chats}, {@code chat_members} and {@code read_receipts} reads for them.
 * Membership is enforced here for REST; a non-member sees 404, exactly as for a missing chat.
 * Calls {@code auth}, {@code input} and {@code web}.
 */
package dev.waterline.chat;
