/**
 * The live-connection model every capability shares without depending on the WebSocket gateway:
 * {@link dev.waterline.session.ClientSession} (one connected client), the
 * {@link dev.waterline.session.SessionRegistry} that enforces one active session per user, the
 * {@link dev.waterline.session.FrameHandler} port through which capabilities answer client
 * frames, and the server-to-client {@link dev.waterline.session.Frames}. Calls {@code input}.
 */
package dev.waterline.session;
