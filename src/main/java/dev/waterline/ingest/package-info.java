/**
 * Accepting the entries of a chat's log: {@code send}, {@code edit}, {@code delete} and
 * {@code react} frames and their REST forms (PROTOCOL.md §9; the rules of the entries that name
 * other entries or files in {@link dev.waterline.ingest.Entries}, decided in the commit), the bounded inbound queue ({@code overloaded} when full,
 * nothing swallowed) and the group-commit stage that writes history rows in one transaction,
 * reserving each chat's gap-free {@code seq} under the chat row's lock, together with what each
 * {@link dev.waterline.ingest.CommitParticipant} adds for the new messages (the outbox rows, from
 * {@code delivery}); only after commit is {@code accepted} answered and each participant told.
 * Idempotent per (sender, correlationId). The limits on a {@code send} frame are the gateway's
 * settings, handed in as a {@link dev.waterline.ingest.SendLimits}. Calls {@code commit}, {@code sql}, {@code history} (the retention loops' interval),
 * {@code session}, {@code input}, {@code auth} and {@code web} (the REST forms), {@code lifecycle} and
 * {@code metrics}.
 */
package dev.waterline.ingest;
