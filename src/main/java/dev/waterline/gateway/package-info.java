/**
 * The WebSocket edge ({@code /ws}): token check at the handshake, one active session per user
 * (the newer evicts the older with 4009 before registering), the input gate on every frame and
 * the dispatch of each frame to the capability that answers its type
 * ({@link dev.waterline.session.FrameHandler}), ping/pong, frame size (1009), withdrawing a
 * connection whose write failed (1011), and closing every socket with 1001 on shutdown; plus the
 * connector's limits (connections below the descriptor limit, per address, header timeout).
 * {@code GatewayHandler} reads and dispatches frames; {@code Admission} decides whether a new
 * connection is let in and what it takes over; a {@code Connection} is thin, its parts doing the
 * work ({@code OutboundWriter}, {@code SendCredits}, {@code FrameAssembler}); {@code GatewayMetrics}
 * holds the gateway's series. The
 * only package that knows about WebSocket. Calls {@code auth}, {@code input}, {@code session},
 * {@code watermark}, {@code presence} (an older connection on another node), {@code reaper},
 * {@code ingest} (it hands ingest its limits on a send frame), {@code lifecycle} and {@code metrics}.
 */
package dev.waterline.gateway;
