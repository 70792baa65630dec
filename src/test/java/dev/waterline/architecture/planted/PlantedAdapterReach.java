package dev.waterline.architecture.planted;

import dev.waterline.watermark.WatermarkIndex;
import dev.waterline.watermark.redis.RedisWatermarkIndexes;

/** Breaks the adapter rule: reaches into another capability's adapter sub-package ({@code watermark.redis}). */
public class PlantedAdapterReach {

    public WatermarkIndex index() {
        return RedisWatermarkIndexes.on(null);
    }
}
