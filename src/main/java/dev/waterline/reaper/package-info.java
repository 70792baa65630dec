/**
 * Withdrawing clients from live delivery, and the reapers that decide it: idle (nothing received
 * for the idle timeout, 4000), overload (more pending deliveries than max-pending, 4008) and
 * attempts (a delivery re-sent more than max-delivery-attempts times, 4008; the verdict is
 * {@code AttemptsReaper}'s, asked by the poller, which meets the rows). A withdrawal removes the
 * client's pending set, count and pin and closes that one socket: never an ack, never a touch of
 * history. Calls {@code session}, {@code watermark}, {@code presence} (a connection on another
 * node), {@code lifecycle} and {@code metrics}.
 */
package dev.waterline.reaper;
