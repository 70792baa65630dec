/**
 * The chat load, start to verdict: {@code LoadRun} mints tokens, creates the pattern's chats,
 * connects every simulated client and offers the open-loop load; {@code Reconciler} is the proof
 * that nothing was lost (G1: every accepted message in its chat's history; G3: in what each
 * recipient holds). {@code Walkthrough} checks a new client's first steps one by one.
 */
package dev.waterline.load.chat;
