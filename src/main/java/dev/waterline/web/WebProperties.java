package dev.waterline.web;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code waterline.web.*}.
 *
 * @param homePage whether {@code /} answers with a page that says what this server is and how to
 *                 start (links to the API docs, health, metrics). Default {@code false}; the
 *                 zero-configuration mode turns it on. Off, {@code /} is 404.
 */
@ConfigurationProperties("waterline.web")
public record WebProperties(@DefaultValue("false") boolean homePage) {
}
