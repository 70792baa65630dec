/**
 * Accepting sends: the bounded inbound queue ({@code overloaded} when full, nothing swallowed)
 * and the group-commit stage that writes history rows, then one outbox row per recipient, in one
 * transaction, reserving each chat's gap-free {@code seq} under the chat row's lock; only after
 * commit is {@code accepted} answered and the rows handed to the fast path. Idempotent per
 * (sender, correlationId). Calls {@code delivery} (hand-off), {@code outbox} (row type),
 * {@code session} and {@code metrics}.
 */
package dev.waterline.ingest;
