/**
 * Process-level setup: the zero-configuration mode that starts an embedded PostgreSQL and
 * Redis when none is configured, and the properties that switch it. Calls nothing else.
 */
package dev.waterline.config;
