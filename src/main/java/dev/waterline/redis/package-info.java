/**
 * The Redis key names that more than one capability reads or writes, in one place: the watermark
 * index's scripts and presence's heartbeats share the live nodes and the index's generation.
 * Each capability keeps the keys only it touches to itself. Calls nothing else.
 */
package dev.waterline.redis;
