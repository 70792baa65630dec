package dev.waterline.presence;

import java.util.Set;

/**
 * The users whose connections were on {@code node} left live delivery together: the node stopped,
 * or missed its heartbeats and was declared dead. Published (a Spring event) on the node that
 * withdrew them, once; a user among them may have connected elsewhere meanwhile.
 */
public record UsersWithdrawn(String node, Set<String> users) {
}
