/**
 * The one gate every string passes on its way in: WebSocket frames (every field name and string
 * value), REST bodies, parameters and path variables, and the {@code sub} of a token. Refuses
 * U+0000 and unpaired surrogates anywhere (PostgreSQL cannot store the first and the driver
 * silently replaces the second, and a frame holding one cannot be written to a socket), and
 * control characters in ids. Nothing reaches a queue, a statement or another client before it
 * has passed here. Calls nothing else in Waterline.
 */
package dev.waterline.input;
