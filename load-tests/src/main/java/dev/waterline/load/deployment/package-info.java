/**
 * What the harness starts and breaks: a server from the packaged jar ({@code ServerProcess},
 * {@code ExtractedJar}), a private deployment a chaos or soak run owns outright ({@code Deployment}:
 * its own PostgreSQL and Redis), and the loopback TCP proxy that makes a network's faults
 * ({@code FaultProxy}, {@code waterline-load proxy}: {@code ProxyCli}).
 */
package dev.waterline.load.deployment;
