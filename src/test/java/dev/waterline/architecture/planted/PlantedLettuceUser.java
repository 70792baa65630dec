package dev.waterline.architecture.planted;

import io.lettuce.core.RedisURI;

/** Breaks the Lettuce rule: not a Redis adapter, yet it speaks Lettuce. */
public class PlantedLettuceUser {

    public String host(RedisURI uri) {
        return uri.getHost();
    }
}
