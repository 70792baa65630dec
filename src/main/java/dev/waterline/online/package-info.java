/**
 * Presence (PROTOCOL.md §10): whether a user is online on any node, announced (debounced) to the
 * connected users who share a chat with them; {@code GET /api/users/{userId}/presence} for
 * co-members; the hidden setting ({@code PUT /api/me/settings}). What was announced lives in Redis
 * ({@code online/*.lua}), the setting in PostgreSQL ({@code user_settings}); each node pushes to
 * the co-members it holds. Named {@code online} because {@code presence} is the cluster's port of
 * who is connected where, which this reads. Calls {@code auth}, {@code chat}, {@code input},
 * {@code lifecycle}, {@code metrics}, {@code presence}, {@code session} and {@code web}.
 */
package dev.waterline.online;
