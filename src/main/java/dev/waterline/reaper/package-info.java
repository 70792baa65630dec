/**
 * The reapers that withdraw clients from live delivery (idle, overload, attempts). This issue
 * carries only their configuration, which the gateway advertises in {@code welcome}; the loops
 * arrive with outbox reclaim. Calls nothing yet.
 */
package dev.waterline.reaper;
