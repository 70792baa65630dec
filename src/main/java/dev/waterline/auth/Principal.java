package dev.waterline.auth;

/**
 * Who a verified token speaks for, and until when.
 *
 * @param userId the token's {@code sub}, already through the user-id gate
 * @param goodUntilMillis epoch milliseconds from which the token is refused ({@code exp} plus the
 *                        clock skew), {@link Long#MAX_VALUE} for a token without {@code exp}
 */
public record Principal(String userId, long goodUntilMillis) {
}
