package dev.waterline.auth;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * On an endpoint a browser reaches without being able to set headers ({@code EventSource}, an
 * {@code <img>}): the token may also come as the query parameter {@code access_token}, as for
 * {@code /ws} (PROTOCOL.md §1, §6). A header, when present, wins.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
public @interface QueryToken {
}
