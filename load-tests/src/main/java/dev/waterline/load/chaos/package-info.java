/**
 * {@code waterline-load chaos} ({@code Chaos}, {@code load-tests/chaos.sh}): one fault per scenario
 * under the chat load, on a deployment of its own, each run reconciled message by message, chunk by
 * chunk and hook delivery by hook delivery, with the time to recover.
 */
package dev.waterline.load.chaos;
