/**
 * The hooks side of a load run ({@code --hook-kind}, PROTOCOL.md §7): {@code HookLoad} makes one hook
 * per chat, runs its receiver, and reconciles every accepted message against what the hook received.
 */
package dev.waterline.load.hooks;
