/**
 * Waterline: a WebSocket chat backend whose one promise is that no accepted message is lost.
 * Packages are cut by capability; {@code docs/ARCHITECTURE.md} maps them and states the invariants.
 */
package dev.waterline;
