package dev.waterline.ingest;

/**
 * What a {@code send} frame may hold, as the gateway's operators set it
 * ({@code waterline.gateway.max-body-chars}): handed in by the gateway's wiring, so that ingest
 * reads no other capability's configuration.
 *
 * @param maxBodyChars a longer body gets {@code too_large}
 */
public record SendLimits(int maxBodyChars) {
}
