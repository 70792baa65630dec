package dev.waterline.presence;

/** A user's live connection on a node: {@code sessionId} is the connection's epoch. */
public record Location(String userId, String node, String sessionId) {
}
