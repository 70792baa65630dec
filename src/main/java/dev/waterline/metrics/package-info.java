/**
 * The Prometheus series of PROTOCOL.md §5, named in one place and registered at start so that
 * zeros show. Owners of a gauge's state register it here through {@link dev.waterline.metrics.WaterlineMetrics}.
 * Calls nothing else.
 */
package dev.waterline.metrics;
