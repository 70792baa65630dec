/**
 * {@code waterline-load soak} ({@code Soak}, {@code load-tests/soak.sh}): the chat load for hours on a
 * one-node deployment, its sampled series judged flat by a stated rule and plotted.
 */
package dev.waterline.load.soak;
