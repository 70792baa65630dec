package dev.waterline.reclaim;

import dev.waterline.watermark.IndexHealth;
import dev.waterline.watermark.MarkerStore;
import dev.waterline.watermark.WatermarkIndex;
import org.springframework.stereotype.Component;

/**
 * The three records of the watermark index that every part of reclaim reads: the index itself
 * (Redis), the marker token and generation PostgreSQL holds for it, and this node's trust in its
 * part of it.
 */
@Component
record IndexStores(WatermarkIndex redis, MarkerStore markers, IndexHealth health) {
}
