/**
 * Durable streams under load. {@code waterline-load streams} ({@code StreamLoad}: the command and
 * its four shapes) runs producers ({@code ProducedStream}, appending over a
 * {@code StreamConnection}) and readers ({@code StreamReader}), its chats and streams made over REST
 * ({@code StreamRest}), and reconciles every reader chunk by chunk ({@code StreamVerdict},
 * {@code Latency}). {@code StreamTraffic} is the streams beside a chaos run's chat load.
 */
package dev.waterline.load.streams;
