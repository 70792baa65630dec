/** The cluster's stream signals on Redis pub/sub. */
package dev.waterline.streams.redis;
