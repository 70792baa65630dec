/**
 * The hook sinks: one adapter of {@link dev.waterline.hooks.Sink} per kind of target, each with
 * its protocol's own well-kept client (the JDK's HTTP client, RabbitMQ's amqp-client, the HiveMQ
 * MQTT client, jnats, kafka-clients, Lettuce). Each checks the target's address with the SSRF guard
 * before every call and connects to the address it checked; each counts a delivery done only on
 * its target's confirmation.
 */
package dev.waterline.hooks.sinks;
