/**
 * Identity: verifying HS256 JWTs (nimbus-jose-jwt; canonical form, required {@code exp},
 * optional {@code iss}/{@code aud}, user ids through the input gate), the REST authentication
 * interceptor and the dev-token endpoint. Calls {@code input}.
 */
package dev.waterline.auth;
