/** The single node's stream signals: none. */
package dev.waterline.streams.local;
