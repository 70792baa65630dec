/**
 * What the background loops (group commit, fast path, poller, reclaim, reapers, receipts) share
 * to stop: waking their threads and waiting for them within a bound. Calls nothing else.
 */
package dev.waterline.lifecycle;
