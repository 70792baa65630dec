/**
 * Typing indicators (PROTOCOL.md §10): a {@code typing} frame is coalesced to one per user per
 * chat per {@code waterline.typing.interval}, checked against the chat's members in one query per
 * batch ({@code not_found} for a chat the sender is not in) and pushed to the chat's other members
 * connected on any node; never stored, never in the outbox, and the first work shed under load.
 * Calls {@code session}, {@code presence}, {@code ingest}, {@code lifecycle} and {@code metrics}.
 */
package dev.waterline.typing;
