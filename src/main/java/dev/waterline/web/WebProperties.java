package dev.waterline.web;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code waterline.web.*}.
 *
 * @param homePage whether {@code /} answers with the browser demo (a chat page on the JavaScript
 *                 client, with its files under {@code /demo/} and {@code /client/}) and
 *                 {@code /start} with a page that says how to take the first steps (links to the
 *                 API docs, health, metrics). Default {@code false}; the zero-configuration mode
 *                 turns it on. Off, all of them are 404.
 */
@ConfigurationProperties("waterline.web")
public record WebProperties(@DefaultValue("false") boolean homePage) {
}
