/**
 * {@code waterline-load peers}: Waterline measured beside the brokers a team would otherwise build
 * chat on. {@code Peers} runs the table; a broker's run is a {@code PeerRun} against a
 * {@code PeerSystem} ({@code RabbitPeer}, {@code JetStreamPeer}) it starts and stops.
 */
package dev.waterline.load.peers;
