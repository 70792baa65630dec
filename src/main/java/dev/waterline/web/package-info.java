/**
 * REST plumbing shared by the capabilities that expose endpoints: the error body of
 * PROTOCOL.md ({@code {"error":code,"message":…}}), request-body validation helpers and the
 * registration of the authentication interceptor. Calls {@code auth}.
 */
package dev.waterline.web;
