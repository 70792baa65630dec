/**
 * Identity: verifying HS256 JWTs (nimbus-jose-jwt), the REST authentication interceptor and the
 * dev-token endpoint. Calls nothing else in Waterline.
 */
package dev.waterline.auth;
