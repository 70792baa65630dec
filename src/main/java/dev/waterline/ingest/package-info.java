/**
 * Accepting sends: {@code send} frames, the bounded inbound queue ({@code overloaded} when full,
 * nothing swallowed) and the group-commit stage that writes history rows in one transaction,
 * reserving each chat's gap-free {@code seq} under the chat row's lock, together with what each
 * {@link dev.waterline.ingest.CommitParticipant} adds for the new messages (the outbox rows, from
 * {@code delivery}); only after commit is {@code accepted} answered and each participant told.
 * Idempotent per (sender, correlationId). The limits on a {@code send} frame are the gateway's
 * settings, handed in as a {@link dev.waterline.ingest.SendLimits}. Calls {@code commit}, {@code sql}, {@code history} (the retention loops' interval),
 * {@code session}, {@code input}, {@code lifecycle} and {@code metrics}.
 */
package dev.waterline.ingest;
